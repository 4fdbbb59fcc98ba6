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

// A time to beat from outside the task's kernels: PyTorch eager or torch.compile for a task whose
// reference is a PyTorch module, timed by the reference's process on the same inputs at the
// benchmark sizes (docs/pytorch.md).
struct ExternalBaseline {
  std::string name;    // "torch eager", "torch.compile"
  std::string device;  // where it ran: "cpu (PyTorch 1.13.0, 2 threads)"
  std::optional<TimingStats> time;
  std::optional<double> speedup;  // its median time over the candidate's
  std::string unavailable;        // why it has no time ("torch.compile is not in PyTorch 1.13")
};

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
  // PyTorch's own times (eager, torch.compile) for a task whose reference is a PyTorch module.
  std::vector<ExternalBaseline> external_baselines;
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
