#pragma once
// Generated sparse structures for tasks with index buffers: a CSR matrix whose row lengths follow
// a power law (a few very long rows, many short ones, as in web and social graphs), described
// entirely by its shape, its nonzero count, a seed and a skew, so the same task file always gives
// the same matrix.

#include <cstdint>
#include <vector>

namespace kf {

struct CsrStructure {
  std::vector<int64_t> row_ptr;  // rows + 1 offsets, row_ptr[0] = 0, row_ptr[rows] = nnz
  std::vector<int64_t> col_idx;  // nnz column indices, strictly increasing within each row
};

// Row r's length is proportional to (rank(r) + 1)^-skew, ranks a random permutation of the rows
// (skew 0: all rows alike); lengths are capped at `cols` and sum to exactly `nnz`. Columns are
// distinct and uniform within a row. Requires 0 < nnz <= rows * cols. With `columns` false only
// row_ptr is made (the same offsets; col_idx left empty).
CsrStructure PowerLawCsr(int64_t rows, int64_t cols, int64_t nnz, uint64_t seed, double skew,
                         bool columns = true);

}  // namespace kf
