#pragma once
// The verdict on one candidate on one device, as plain values: status, correctness figures,
// timing statistics and derived metrics. A failing kernel is an Evaluation, never an exception.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/kernel.hpp"

namespace kf {

enum class Status {
  kOk,
  kCompileError,
  kLaunchError,
  kIncorrect,
  kNan,
  kCrash,
  kTimeout,
  kImplausible,
  kInvalidConfig,
};

std::string_view StatusName(Status s);

struct TimingStats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int runs = 0;
};

TimingStats Summarize(std::vector<double> samples_ms);

struct Evaluation {
  Status status = Status::kOk;
  std::string reason;  // why, for every status but ok
  std::string device;
  Config config;
  // The size set timed; for a crash or time-out, the size set it happened at.
  std::string bench_sizes;
  std::optional<TimingStats> time;
  std::optional<TimingStats> baseline_time;
  std::optional<double> speedup;
  // Comparison figures, meaningful only when `compared` (an output was compared with the
  // reference's); a kernel that failed before that has none (JSON null, "not reached").
  bool compared = false;
  double max_abs_err = 0, max_rel_err = 0, bad_ratio = 0;
  long long nan_count = 0;
  std::optional<double> bandwidth_gbs;
  std::optional<double> roofline_fraction;  // of the device's measured copy bandwidth
  // For a task that declares FLOPs: the arithmetic rate at the median time, and its fraction of
  // the device's measured peak (the fastest precision class: the compute ceiling).
  std::optional<double> gflops;
  std::optional<double> compute_fraction;
  std::string compile_log;
  bool compile_cache_hit = false;  // the binary came from the compile cache
  std::vector<std::string> hints;
  // To reproduce the checks; for a crash or time-out during them, the last is the one it hit.
  std::vector<unsigned long long> check_seeds;
  std::vector<int> descriptor;  // the behaviour cell, once compiled
  // Wall time of each step in the executor: "load" (compile or load), "check", "time".
  std::map<std::string, double> phase_ms;
};

}  // namespace kf
