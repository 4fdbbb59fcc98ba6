#include "eval/compare.hpp"

#include <algorithm>
#include <cmath>

namespace kf {

void Figures::Merge(const Figures& o) {
  max_abs_err = std::max(max_abs_err, o.max_abs_err);
  max_rel_err = std::max(max_rel_err, o.max_rel_err);
  if (first_bad < 0 && o.first_bad >= 0) first_bad = elements + o.first_bad;
  elements += o.elements;
  over_1pct += o.over_1pct;
  nan_count += o.nan_count;
  unwritten += o.unwritten;
  out_of_tol += o.out_of_tol;
}

Figures CompareOutput(const HostBuffer& ref, const HostBuffer& out, uint32_t poison,
                      const Tolerance& tol) {
  Figures f;
  f.elements = static_cast<int64_t>(ref.count);
  for (size_t i = 0; i < ref.count; ++i) {
    double r = LoadElement(ref.bytes.data(), ref.dtype, i);
    double o = LoadElement(out.bytes.data(), out.dtype, i);
    if (IsPoison(out, i, poison)) {
      ++f.unwritten;
      ++f.out_of_tol;
      if (f.first_bad < 0) f.first_bad = static_cast<int64_t>(i);
      continue;
    }
    if (!std::isfinite(o)) {
      if (std::isfinite(r) || std::isnan(r) != std::isnan(o)) {
        ++f.nan_count;
        ++f.out_of_tol;
        if (f.first_bad < 0) f.first_bad = static_cast<int64_t>(i);
      }
      continue;
    }
    double abs_err = std::fabs(r - o);
    double rel_err = abs_err / (std::fabs(r) + 1e-6);
    f.max_abs_err = std::max(f.max_abs_err, abs_err);
    f.max_rel_err = std::max(f.max_rel_err, rel_err);
    if (rel_err > 0.01) ++f.over_1pct;
    if (abs_err > tol.atol + tol.rtol * std::fabs(r)) {
      ++f.out_of_tol;
      if (f.first_bad < 0) f.first_bad = static_cast<int64_t>(i);
    }
  }
  return f;
}

}  // namespace kf
