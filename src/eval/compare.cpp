#include "eval/compare.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "eval/parallel.hpp"

namespace kf {

void Figures::Merge(const Figures& o) {
  if (o.max_abs_err > max_abs_err && o.worst >= 0) worst = elements + o.worst;
  max_abs_err = std::max(max_abs_err, o.max_abs_err);
  max_rel_err = std::max(max_rel_err, o.max_rel_err);
  if (first_bad < 0 && o.first_bad >= 0) first_bad = elements + o.first_bad;
  elements += o.elements;
  over_1pct += o.over_1pct;
  nan_count += o.nan_count;
  unwritten += o.unwritten;
  out_of_tol += o.out_of_tol;
}

namespace {

Figures CompareRange(const HostBuffer& ref, const HostBuffer& out, uint32_t poison,
                     const Tolerance& tol, size_t begin, size_t end) {
  Figures f;  // first_bad relative to `begin`, as Merge expects
  f.elements = static_cast<int64_t>(end - begin);
  for (size_t i = begin; i < end; ++i) {
    double r = LoadElement(ref.bytes.data(), ref.dtype, i);
    double o = LoadElement(out.bytes.data(), out.dtype, i);
    if (IsPoison(out, i, poison)) {
      ++f.unwritten;
      ++f.out_of_tol;
      if (f.first_bad < 0) f.first_bad = static_cast<int64_t>(i - begin);
      continue;
    }
    if (!std::isfinite(o)) {
      if (std::isfinite(r) || std::isnan(r) != std::isnan(o)) {
        ++f.nan_count;
        ++f.out_of_tol;
        if (f.first_bad < 0) f.first_bad = static_cast<int64_t>(i - begin);
      }
      continue;
    }
    double abs_err = std::fabs(r - o);
    double rel_err = abs_err / (std::fabs(r) + 1e-6);
    if (abs_err > f.max_abs_err) {
      f.max_abs_err = abs_err;
      f.worst = static_cast<int64_t>(i - begin);
    }
    f.max_rel_err = std::max(f.max_rel_err, rel_err);
    if (rel_err > 0.01) ++f.over_1pct;
    if (abs_err > tol.atol + tol.rtol * std::fabs(r)) {
      ++f.out_of_tol;
      if (f.first_bad < 0) f.first_bad = static_cast<int64_t>(i - begin);
    }
  }
  return f;
}

}  // namespace

Figures CompareOutput(const HostBuffer& ref, const HostBuffer& out, uint32_t poison,
                      const Tolerance& tol) {
  constexpr size_t kChunk = size_t{1} << 20;
  std::vector<Figures> parts((ref.count + kChunk - 1) / kChunk);
  ForChunks(ref.count, kChunk, [&](size_t begin, size_t end, size_t chunk) {
    parts[chunk] = CompareRange(ref, out, poison, tol, begin, end);
  });
  Figures f;
  for (const Figures& p : parts) f.Merge(p);  // in order: the first bad element stays the first
  return f;
}

}  // namespace kf
