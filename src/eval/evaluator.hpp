#pragma once
// Judges candidates of one task on one device, in three steps: load (compile through the cache,
// or take the artifact a builder made), check against the reference on every check size set with
// fresh seeds (outputs poisoned, inputs checksummed, the first launch repeated for determinism, a
// result carried between launches named), and time on a benchmark size set interleaved with the
// baseline (cache flushed before every launch), re-checking the timed output and deriving
// speedup, bandwidth, roofline fraction and plausibility.
// Every outcome of the candidate is an Evaluation; only failures of the task's own reference or
// baseline, or of the tool, throw. Classifying the candidate is not the evaluator's business: it
// hands back the artifact's listing for the search to classify.

#include <memory>
#include <optional>
#include <string>

#include "backend/device.hpp"
#include "core/candidate.hpp"
#include "core/evaluation.hpp"
#include "core/task.hpp"
#include "eval/bandwidth.hpp"
#include "eval/compile_cache.hpp"

namespace kf {

// What the evaluator is doing, for a supervisor that gives each phase its own deadline.
enum class EvalPhase { kCompile, kLaunch, kHost };

class EvalObserver {
 public:
  virtual ~EvalObserver() = default;
  virtual void Phase(EvalPhase phase) = 0;  // called when a phase starts
};

struct EvalOptions {
  std::string bench_sizes;  // a size-set name; empty: chosen by device class
  int check_seeds = 2;      // fresh seeds per check size set
  int warmup_runs = 3;
  int min_runs = 10;
  int max_runs = 100;
  double min_timed_ms = 200;  // keep timing until this much candidate time is collected
  // Allowed factor over the peak bandwidth before a time is implausible. A GPU's copy bandwidth
  // is a tight ceiling; a CPU device's, measured on a machine shared with other work, is loose.
  double plausibility_margin = 1.25;
  double cpu_plausibility_margin = 3.0;
  EvalObserver* observer = nullptr;  // not owned; may be null
};

class Evaluator {
 public:
  // Compiles and loads the task's reference and baseline for the device's language; throws
  // InputError if either is broken.
  Evaluator(Device& device, const Task& task, const CompileCache& cache, EvalOptions options);
  ~Evaluator();

  // `listing` (if given) receives the compiled artifact's listing, the classifier's input.
  Evaluation Evaluate(const RunRequest& request, std::string* listing = nullptr);
  Evaluation Evaluate(const Kernel& kernel, const Config& config) {
    return Evaluate(RunRequest{{kernel, config}, std::nullopt});
  }
  const PeakBandwidth& peak_bandwidth() const { return peak_; }
  // Median time of one baseline launch at the benchmark sizes (a few runs), for deadlines.
  double MeasureBaselineLaunchMs();

  struct Prepared;

 private:
  // Each step returns false with the verdict in `ev` when the candidate failed it.
  bool Load(const RunRequest& request, int64_t group_size, Evaluation& ev,
            std::unique_ptr<LoadedKernel>* loaded, std::string* listing);
  bool Check(const Kernel& kernel, const Config& config, LoadedKernel& loaded, Evaluation& ev);
  bool Time(const Kernel& kernel, const Config& config, LoadedKernel& loaded, const SizeSet& bench,
            Evaluation& ev);
  void Phase(EvalPhase p) const {
    if (options_.observer) options_.observer->Phase(p);
  }

  Device& device_;
  const Task& task_;
  const CompileCache& cache_;
  EvalOptions options_;
  std::unique_ptr<Prepared> reference_, baseline_;
  PeakBandwidth peak_;
};

}  // namespace kf
