#pragma once
// Judges candidates of one task on one device, in three steps: load (compile through the cache,
// or take the artifact a builder made), check against the reference on every check size set with
// fresh seeds (outputs poisoned, guard zones scanned, inputs hashed, the first launch repeated for
// determinism, a result carried between launches named), and time on a benchmark size set (cache
// flushed before every launch; the baseline beside every launch or re-timed every so often, as
// the request's settings say), re-checking the timed output and deriving speedup, bandwidth,
// roofline fraction and plausibility (under the bytes or the FLOP floor: implausible). A task
// that pins its precision has the candidate probed for less first (precision_probe.hpp). The
// reference runs after the candidate, never beside it, and a no-op "ghost" kernel is judged
// before the first candidate launch: if it passes, the harness leaked the answer (a ToolError). By
// default all of it happens on the device (inputs drawn there, comparisons reduced there: only
// figures cross the bus, device_workspace.hpp); the host path (inputs drawn and outputs compared on
// the host) stays as a debug mode and test oracle. Every outcome of the candidate is an Evaluation;
// only failures of the task's own reference or baseline, or of the tool, throw. Classifying the
// candidate is not the evaluator's business: it hands back the artifact's listing for the search to
// classify.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backend/device.hpp"
#include "core/candidate.hpp"
#include "core/evaluation.hpp"
#include "core/task.hpp"
#include "eval/bandwidth.hpp"
#include "eval/compile_cache.hpp"
#include "eval/compute_peak.hpp"
#include "eval/reference_source.hpp"
#include "eval/workspace.hpp"

namespace kf {

class DeviceTools;
class DeviceWorkspace;

// What the evaluator is doing, for a supervisor that gives each phase its own deadline.
enum class EvalPhase { kCompile, kLaunch, kHost };

// Where an evaluation is: its step, the size set and seed of the inputs, and whose launch runs.
// Reported with every phase, so that a supervisor whose executor dies or hangs can say where.
struct EvalPlace {
  std::string step;   // "load", "check" or "time"
  std::string sizes;  // the size set's name; "" before inputs are drawn
  std::optional<uint64_t> seed;
  std::string launch;  // "candidate", "reference" or "baseline"; "" between launches
};

// "check at size set 'ragged', seed 42, candidate launch"
std::string DescribePlace(const EvalPlace& place);

// What a reference source writes over before each timed run to flush the cache: twice the
// device's last-level cache (64 MiB where the device does not say).
int64_t FlushBytes(const DeviceInfo& info);

// A reference source's baselines as an evaluation reports them: each one's runs summarised.
std::vector<ExternalBaseline> Summarized(const std::vector<BaselineRuns>& runs);

class EvalObserver {
 public:
  virtual ~EvalObserver() = default;
  // Called when a phase starts, and where it is; `launches` launches come in a launch phase.
  // `compiling_s` > 0: the first of them may also compile the kernel (a device that builds the
  // code for a group size when a launch of it first runs), which took about that long to load.
  virtual void Phase(EvalPhase phase, int launches, const EvalPlace& place, double compiling_s) = 0;
};

struct EvalOptions {
  std::string bench_sizes;  // a size-set name; empty: chosen by device class
  EvalSettings settings;    // for a request that brings none
  // Allowed factor over the peak bandwidth before a time is implausible. A GPU's copy bandwidth
  // is a tight ceiling; a CPU device's, measured on a machine shared with other work, is loose.
  double plausibility_margin = 1.25;
  double cpu_plausibility_margin = 3.0;
  // The same for the peak arithmetic rate: measured with plain MMA or FMA loops, which a tuned
  // kernel (Hopper's wgmma, say) may outrun by a good deal, so the factor is wider.
  double compute_margin = 2.0;
  double cpu_compute_margin = 3.0;
  EvalObserver* observer = nullptr;  // not owned; may be null
  // Makes the reference source of a task whose reference is not a kernel (a PyTorch module);
  // unset, such a task is refused unless it also gives a reference kernel for the device.
  ReferenceSourceFactory reference_source;
};

class Evaluator {
 public:
  // Compiles and loads the task's reference and baseline for the device's language; throws
  // InputError if either is broken. A task whose reference is a PyTorch module gets its reference
  // source (EvalOptions::reference_source): it computes the reference's outputs where the task
  // has no reference kernel for the device, and its baselines (PyTorch eager, torch.compile) are
  // timed beside the baseline kernel, or stand for it where the task has none.
  Evaluator(Device& device, const Task& task, const CompileCache& cache, EvalOptions options);
  ~Evaluator();

  // `listing` (if given) receives the compiled artifact's listing, the classifier's input.
  Evaluation Evaluate(const RunRequest& request, std::string* listing = nullptr);
  Evaluation Evaluate(const Kernel& kernel, const Config& config) {
    return Evaluate(RunRequest{{kernel, config}, std::nullopt});
  }
  const PeakBandwidth& peak_bandwidth() const { return peak_; }
  const PeakCompute& peak_compute() const { return peak_compute_; }
  // Median time of one baseline launch at the benchmark sizes (a few runs), for deadlines.
  double MeasureBaselineLaunchMs();

  // The task's own kernels, compiled and loaded once.
  struct Prepared {
    Kernel kernel;
    Config config;
    LoadedKernels loaded;
  };
  struct Timing;

 private:
  // Each step returns false with the verdict in `ev` when the candidate failed it.
  bool Load(const RunRequest& request, Evaluation& ev, LoadedKernels* loaded, std::string* listing);
  // Whether the compiled entry point of launch `launch` fits the device: its local memory, and
  // its own group-size limit against the launch's block at the benchmark sizes.
  bool FitsDevice(LoadedKernel& loaded, size_t launch, const Kernel& kernel, const Config& config,
                  Evaluation& ev);
  // Whether the candidate computes in the task's precision (precision_probe.cpp).
  bool ProbePrecision(const Kernel& kernel, const Config& config, const LoadedKernels& loaded,
                      Evaluation& ev);
  // On the device (device_checks.cpp).
  bool CheckOnDevice(const Kernel& kernel, const Config& config, const LoadedKernels& loaded,
                     const EvalSettings& s, Evaluation& ev);
  bool TimeOnDevice(const Kernel& kernel, const Config& config, const LoadedKernels& loaded,
                    const SizeSet& bench, const EvalSettings& s, Evaluation& ev);
  // Times the candidate's launch sequence (`candidate`), or the baseline's when null.
  Timing TimeLaunches(const std::vector<LaunchStep>* candidate, DeviceWorkspace& ws,
                      bool with_baseline, const EvalSettings& s);
  // Careful timing with a reference source: the candidate's launches (the baseline kernel's
  // beside them when `with_baseline`) and the source's baselines in alternating rounds, the
  // source's pooled into `external`.
  Timing TimeInRounds(const std::vector<LaunchStep>& candidate, DeviceWorkspace& ws,
                      bool with_baseline, const EvalSettings& s,
                      std::vector<ExternalBaseline>* external);
  // The baselines' timing at the benchmark sizes, re-timed every so often (the baseline kernel's
  // when `kernel`, the reference source's own); the caller counts as one more candidate.
  struct ReusedTiming {
    std::optional<TimingStats> kernel;       // the baseline kernel's, when asked for
    std::vector<ExternalBaseline> external;  // the reference source's
    std::chrono::steady_clock::time_point when;
    int candidates = 0;
  };
  const ReusedTiming& ReusedBaselines(DeviceWorkspace& ws, const EvalSettings& s, bool kernel);
  // Runs the reference on this seed's inputs into the workspace's reference outputs: the task's
  // reference kernel, else the reference source.
  void RunReference(DeviceWorkspace& ws);
  // A no-op kernel with the candidate's signature where the candidate would run, judged as the
  // candidate would be: throws ToolError if it passes (the harness leaked the answer).
  void GhostReplay(DeviceWorkspace& ws, const std::function<void()>& run_reference,
                   const Tolerance& tolerance, const std::string& where);
  // Before any candidate launch: no workspace keeps a reference's output.
  void ScrubReferences();
  DeviceWorkspace& WorkspaceOn(const SizeSet& set, bool checks);
  // On the host (host_checks.cpp): inputs drawn and outputs compared there.
  bool CheckOnHost(const Kernel& kernel, const Config& config, const LoadedKernels& loaded,
                   const EvalSettings& s, Evaluation& ev);
  bool TimeOnHost(const Kernel& kernel, const Config& config, const LoadedKernels& loaded,
                  const SizeSet& bench, const EvalSettings& s, Evaluation& ev);
  // Speedup, bandwidth, roofline fraction; false (implausible) past the physics floor: the
  // bytes over the peak bandwidth, then the FLOPs over the peak arithmetic rate.
  bool Derive(const Env& sizes, Evaluation& ev);
  // The arithmetic rate and its fraction of the peak, then the FLOP floor.
  bool CheckComputeFloor(const Env& sizes, Evaluation& ev);
  // Moves to a step (at a size set and seed, once inputs are drawn), and says where it is now.
  void At(std::string step, std::string sizes = "", std::optional<uint64_t> seed = std::nullopt) {
    place_ = {std::move(step), std::move(sizes), seed, ""};
  }
  std::string Where() const { return DescribePlace(place_); }
  // A phase starts; `launch` names whose launch ("candidate", ...) it is.
  void Phase(EvalPhase p, int launches = 1, const char* launch = "", double compiling_s = 0) {
    place_.launch = launch;
    if (options_.observer) options_.observer->Phase(p, launches, place_, compiling_s);
  }
  // A launch phase of the candidate with `launch`: on a device that compiles at a group size's
  // first launch (PoCL), the first at each group size says it may compile, for about as long as
  // loading the candidate took.
  void CandidatePhase(int launches, std::span<const LaunchStep> steps);
  // The candidate's launch sequence on `ws`, with its scratch buffers in place there; false with
  // the verdict (invalid_config) in `ev` when the launch rule or a scratch size is invalid here.
  bool CandidateSteps(const Kernel& kernel, const Config& config, const LoadedKernels& loaded,
                      DeviceWorkspace& ws, const std::string& where, Evaluation& ev,
                      std::vector<LaunchStep>* steps);

  Device& device_;
  const Task& task_;
  const CompileCache& cache_;
  EvalOptions options_;
  std::unique_ptr<Prepared> reference_, baseline_;  // null where the reference source stands in
  std::unique_ptr<ReferenceSource> source_;         // the task's PyTorch module; may be null
  std::unique_ptr<LoadedKernel> ghost_;             // the ghost replay's no-op (ghost_replay.hpp)
  EvalPlace place_;                                 // of the evaluation under way
  PeakBandwidth peak_;
  PeakCompute peak_compute_;
  std::unique_ptr<DeviceTools> tools_;
  std::map<std::string, std::unique_ptr<DeviceWorkspace>> workspaces_;  // by size set
  std::optional<ReusedTiming> baseline_timing_;
  // The candidate's load time and the group sizes it has launched with (CandidatePhase).
  double candidate_load_s_ = 0;
  std::set<std::vector<int64_t>> launched_blocks_;
};

}  // namespace kf
