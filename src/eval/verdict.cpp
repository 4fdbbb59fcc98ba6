#include "eval/verdict.hpp"

#include <fmt/format.h>

#include "eval/hints.hpp"

namespace kf {

bool Fail(Evaluation& ev, Status s, std::string reason) {
  ev.status = s;
  ev.reason = std::move(reason);
  return false;
}

bool LaunchFailed(Evaluation& ev, const std::string& error, const Launch& launch,
                  const DeviceInfo& info, const std::string& where) {
  ev.hints = LaunchHints(error, launch, info);
  return Fail(ev, Status::kLaunchError, fmt::format("{} ({})", error, where));
}

Verdict VerdictFrom(const ArgSpec& a, const Figures& f, const Tolerance& tol,
                    const std::string& where, const std::function<double(bool)>& first_bad) {
  if (f.unwritten > 0) {
    return {{Status::kIncorrect, fmt::format("{}: {} of {} elements never written ({})", a.name,
                                             f.unwritten, f.elements, where)}};
  }
  if (f.nan_count > 0) {
    return {{Status::kNan, fmt::format("{}: {} NaN/Inf elements where the reference is finite ({})",
                                       a.name, f.nan_count, where)}};
  }
  if (f.out_of_tol > 0 || f.bad_ratio() > tol.max_bad_ratio) {
    int64_t k = std::max<int64_t>(f.first_bad, 0);
    return {{Status::kIncorrect,
             fmt::format("{}: {} of {} elements out of tolerance, {:.3g}% over 1% relative error; "
                         "first at [{}]: got {:.6g}, expected {:.6g} ({})",
                         a.name, f.out_of_tol, f.elements, 100.0 * f.bad_ratio(), k,
                         first_bad(false), first_bad(true), where)}};
  }
  return std::nullopt;
}

void RecordFigures(const Figures& total, Evaluation& ev) {
  ev.max_abs_err = total.max_abs_err;
  ev.max_rel_err = total.max_rel_err;
  ev.bad_ratio = total.bad_ratio();
  ev.nan_count = total.nan_count;
}

}  // namespace kf
