#include "core/evaluation.hpp"

#include <algorithm>

namespace kf {

std::string_view StatusName(Status s) {
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kCompileError: return "compile_error";
    case Status::kLaunchError: return "launch_error";
    case Status::kIncorrect: return "incorrect";
    case Status::kNan: return "nan";
    case Status::kCrash: return "crash";
    case Status::kTimeout: return "timeout";
    case Status::kImplausible: return "implausible";
    case Status::kInvalidConfig: return "invalid_config";
  }
  return "?";
}

TimingStats Summarize(std::vector<double> samples) {
  TimingStats s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  s.runs = static_cast<int>(n);
  s.min_ms = samples.front();
  s.max_ms = samples.back();
  s.median_ms = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return s;
}

}  // namespace kf
