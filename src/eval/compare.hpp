#pragma once
// Output comparison against the reference: max absolute error, max relative error
// |ref-out|/(|ref|+1e-6), the share of elements past 1% relative error, NaN/Inf where the
// reference is finite, elements never written (still poisoned), and elements past the tolerance.

#include <cstdint>
#include <string>

#include "core/task.hpp"
#include "eval/inputs.hpp"

namespace kf {

struct Figures {
  double max_abs_err = 0, max_rel_err = 0;
  int64_t elements = 0;
  int64_t over_1pct = 0;   // relative error above 1%
  int64_t nan_count = 0;   // NaN/Inf where the reference is finite
  int64_t unwritten = 0;   // still holding the poison pattern
  int64_t out_of_tol = 0;  // |out-ref| > atol + rtol*|ref|
  int64_t first_bad = -1;  // index of the first element out of tolerance, for the reason string
  int64_t worst = -1;      // index of the (first) element of the largest absolute error

  double bad_ratio() const {
    return elements ? static_cast<double>(over_1pct) / static_cast<double>(elements) : 0.0;
  }
  void Merge(const Figures& o);
};

Figures CompareOutput(const HostBuffer& reference, const HostBuffer& output, uint32_t poison,
                      const Tolerance& tol);

}  // namespace kf
