#include "eval/sparse.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <unordered_set>

namespace kf {

namespace {

// Picks `k` distinct columns of [0, cols) in increasing order into `out`.
void PickColumns(int64_t k, int64_t cols, std::mt19937_64& rng, std::vector<int64_t>& out) {
  if (k * 4 >= cols) {  // dense row: selection sampling, one pass over the columns
    int64_t needed = k;
    for (int64_t c = 0; c < cols && needed > 0; ++c) {
      if (static_cast<int64_t>(rng() % static_cast<uint64_t>(cols - c)) < needed) {
        out.push_back(c);
        --needed;
      }
    }
    return;
  }
  // Sparse row: Floyd's algorithm, then sorted.
  std::vector<int64_t> picked;
  std::unordered_set<int64_t> seen;
  picked.reserve(static_cast<size_t>(k));
  for (int64_t j = cols - k; j < cols; ++j) {
    int64_t t = static_cast<int64_t>(rng() % static_cast<uint64_t>(j + 1));
    if (!seen.insert(t).second) {
      t = j;
      seen.insert(j);
    }
    picked.push_back(t);
  }
  std::sort(picked.begin(), picked.end());
  out.insert(out.end(), picked.begin(), picked.end());
}

}  // namespace

CsrStructure PowerLawCsr(int64_t rows, int64_t cols, int64_t nnz, uint64_t seed, double skew,
                         bool columns) {
  if (rows <= 0 || cols <= 0 || nnz <= 0 ||
      static_cast<double>(rows) * static_cast<double>(cols) < static_cast<double>(nnz))
    throw std::invalid_argument("PowerLawCsr: needs 0 < nnz <= rows * cols");
  std::mt19937_64 rng(seed);
  std::vector<int64_t> rank(static_cast<size_t>(rows));
  std::iota(rank.begin(), rank.end(), 0);
  std::shuffle(rank.begin(), rank.end(), rng);
  std::vector<double> weight(rank.size());
  double total = 0;
  for (size_t r = 0; r < rank.size(); ++r) {
    weight[r] = std::pow(static_cast<double>(rank[r] + 1), -skew);
    total += weight[r];
  }
  std::vector<int64_t> length(rank.size());
  int64_t assigned = 0;
  for (size_t r = 0; r < rank.size(); ++r) {
    auto share = static_cast<int64_t>(std::floor(static_cast<double>(nnz) * weight[r] / total));
    length[r] = std::min(share, cols);
    assigned += length[r];
  }
  // What rounding and the caps left over goes one by one to the rows with room, heaviest first.
  std::vector<size_t> by_rank(rank.size());
  for (size_t r = 0; r < rank.size(); ++r) by_rank[static_cast<size_t>(rank[r])] = r;
  while (assigned < nnz) {
    for (size_t r : by_rank) {
      if (assigned == nnz) break;
      if (length[r] < cols) {
        ++length[r];
        ++assigned;
      }
    }
  }
  CsrStructure csr;
  csr.row_ptr.reserve(rank.size() + 1);
  csr.row_ptr.push_back(0);
  for (size_t r = 0; r < rank.size(); ++r) csr.row_ptr.push_back(csr.row_ptr.back() + length[r]);
  if (!columns) return csr;
  csr.col_idx.reserve(static_cast<size_t>(nnz));
  for (size_t r = 0; r < rank.size(); ++r) PickColumns(length[r], cols, rng, csr.col_idx);
  return csr;
}

}  // namespace kf
