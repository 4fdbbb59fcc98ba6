#pragma once
// What the judging stages exchange: a candidate (a kernel and one configuration of it, how
// thoroughly to judge it, and the key its evaluation is stored under), a run request (the
// candidate with its compiled artifact when a builder made it; otherwise the runner compiles
// where the device is, as OpenCL does), and the reply that comes back for it.

#include <optional>
#include <string>

#include "core/compile.hpp"
#include "core/evaluation.hpp"
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
  // The job's identity: the evaluation key it is stored under (core/identity.hpp), each of a
  // re-verification's repeats its own. Its reply carries it back; "" for a one-off (eval, tune).
  std::string key = "";
};

struct RunRequest {
  Candidate candidate;
  std::optional<CompileResult> compiled;  // ok and with an artifact, when built elsewhere
};

// A candidate's verdict as it comes back, from an executor to its runner and from the judge to
// whoever submitted it: the evaluation and what the classifier reads of its artifact; or, when
// the tool itself failed (an executor that cannot start again, a broken reply), why.
struct RunReply {
  std::string key;  // the candidate's (Candidate::key)
  Evaluation evaluation;
  std::string listing;  // the artifact's listing (the classifier's input); "" when none
  std::string tool_error;
  int runner = -1;         // the runner that ran it; -1 when decided before running
  bool cancelled = false;  // dropped before it ran: no verdict (Judge::CancelPending)
};
// The judge's answer is a run reply (one value at both boundaries).
using JudgeResult = RunReply;

}  // namespace kf
