#pragma once
// Judges candidates of one task on one device: compile (through the cache), check against the
// reference on every check size set with fresh seeds (outputs poisoned, inputs checksummed),
// time on a benchmark size set interleaved with the baseline (cache flushed before every launch),
// re-check the timed output, and derive speedup, bandwidth, roofline fraction and plausibility.
// Within a check size set the buffers are reused with fresh inputs for every seed, so a kernel
// that carries its result between launches is caught; the first launch is repeated on the same
// inputs, so a nondeterministic (racy) kernel is caught.
// Every outcome of the candidate is an Evaluation; only failures of the task's own reference or
// baseline, or of the tool, throw.

#include <memory>
#include <optional>
#include <string>

#include "backend/device.hpp"
#include "core/evaluation.hpp"
#include "core/task.hpp"
#include "eval/bandwidth.hpp"
#include "eval/compile_cache.hpp"
#include "search/classifier.hpp"

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
  std::string descriptors;           // the behaviour space file; "" = descriptors/default.toml
};

class Evaluator {
 public:
  // Compiles and loads the task's reference and baseline for the device's language; throws
  // InputError if either is broken.
  Evaluator(Device& device, const Task& task, const CompileCache& cache, EvalOptions options);
  ~Evaluator();

  Evaluation Evaluate(const Kernel& kernel, const Config& config);
  // Compiles the candidate into the compile cache only (nothing is launched); true if it compiled.
  bool Precompile(const Kernel& kernel, const Config& config);
  const PeakBandwidth& peak_bandwidth() const { return peak_; }
  // Median time of one baseline launch at the benchmark sizes (a few runs), for deadlines.
  double MeasureBaselineLaunchMs();

  struct Prepared;

 private:
  Device& device_;
  const Task& task_;
  const CompileCache& cache_;
  EvalOptions options_;
  std::unique_ptr<Prepared> reference_, baseline_;
  std::optional<DescriptorSpace> descriptors_;
  PeakBandwidth peak_;
};

}  // namespace kf
