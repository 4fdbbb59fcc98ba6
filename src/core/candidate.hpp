#pragma once
// What the judging stages exchange: a candidate (a kernel and one configuration of it, and how
// thoroughly to judge it) and a run request, the candidate with its compiled artifact when a
// builder made it (otherwise the runner compiles where the device is, as OpenCL does).

#include <optional>
#include <string>

#include "core/compile.hpp"
#include "core/kernel.hpp"

namespace kf {

// How a candidate is judged. Every check is always made (every check size set, fresh seeds,
// poisoned outputs, guard zones, input hashes, determinism, the timed output re-checked); the
// settings decide how many seeds and how the timing goes. Thorough (eval, the final
// re-verification): the baseline timed beside every candidate launch, at least 10 runs and
// 200 ms. Fast (inside a search): the baseline timed every so often and reused, runs until the
// median's 95% confidence interval is within 1% (or a cap), a candidate far slower than the time
// to beat stopped after a few runs.
struct EvalSettings {
  int check_seeds = 2;  // fresh seeds per check size set
  int warmup_runs = 3;
  int min_runs = 10, max_runs = 100;
  double min_timed_ms = 200;  // keep timing until this much candidate time (0: no floor)
  double max_timing_ms = 0;   // stop once the timing has taken this long, in wall time (0: no cap)
  double ci_target = 0;       // stop once the median's 95% CI half-width is this share of it
  bool interleave_baseline = true;
  int baseline_every = 25;          // re-time a reused baseline after this many candidates...
  double baseline_seconds = 30;     // ...or this many seconds
  double time_to_beat_ms = 0;       // 0: none
  double stop_factor = 3;           // stopped early when this many times slower...
  int early_runs = 5;               // ...after this many runs
  std::string check_on = "device";  // "device", or "host" (the former path: a debug oracle)

  static EvalSettings Thorough() { return {}; }
  static EvalSettings Fast();
};

inline EvalSettings EvalSettings::Fast() {
  EvalSettings s;
  s.warmup_runs = 2;
  s.min_runs = 5;
  s.max_runs = 50;
  s.min_timed_ms = 0;
  s.max_timing_ms = 100;
  s.ci_target = 0.01;
  s.interleave_baseline = false;
  return s;
}

struct Candidate {
  Kernel kernel;
  Config config;
  std::optional<EvalSettings> settings = std::nullopt;  // none: the runner's own
};

struct RunRequest {
  Candidate candidate;
  std::optional<CompileResult> compiled;  // ok and with an artifact, when built elsewhere
};

}  // namespace kf
