#pragma once
// A reference that is not one of the task's kernels: a program in a process of its own (a PyTorch
// module, src/torch/torch_reference.hpp) that the evaluator asks for the outputs of one size set's
// inputs, and that may time baselines of its own (PyTorch eager, torch.compile) on the benchmark
// inputs. The evaluator reads the inputs back after the candidate's launch, hands them over, and
// puts what comes back where a reference kernel's outputs go: judged the same way, and scrubbed
// before the next candidate launch. The evaluator's layer does not know what runs behind it; the
// program that links the source's layer hands the evaluator a factory (EvalOptions).

#include <functional>
#include <memory>
#include <vector>

#include "core/candidate.hpp"
#include "core/device_info.hpp"
#include "core/evaluation.hpp"
#include "core/task.hpp"
#include "eval/inputs.hpp"

namespace kf {

// One of a reference source's own baselines as timed: its runs after the warm-up, or why none.
struct BaselineRuns {
  std::string name;    // "torch eager", "torch.compile"
  std::string device;  // where it ran
  std::vector<double> times_ms;
  std::string unavailable;  // why it has no runs
};

class ReferenceSource {
 public:
  virtual ~ReferenceSource() = default;
  // The reference's outputs on `args` at `set`: `args` holds one buffer per task argument, the
  // inputs filled (scalars and outputs empty); the answer the same, the outputs filled. Throws
  // InputError naming the reference's file when the reference fails (raises, hangs past its
  // deadline, runs out of memory, returns the wrong shapes).
  virtual std::vector<HostBuffer> Outputs(const SizeSet& set,
                                          const std::vector<HostBuffer>& args) = 0;
  // Its own baselines on the same inputs, timed by the kernels' protocol as far as the source
  // can (`settings`' runs; the cache, of `flush_bytes`, flushed before each run), the first the
  // one that stands for a missing baseline kernel (PyTorch eager), alone when `eager_only`.
  // The runs only: the caller pools rounds and derives speedups. Throws as Outputs does.
  virtual std::vector<BaselineRuns> TimeBaselines(const SizeSet& set,
                                                  const std::vector<HostBuffer>& args,
                                                  const EvalSettings& settings, int64_t flush_bytes,
                                                  bool eager_only) = 0;
};

// Makes the reference source of `task` for `device` (the task's non-kernel reference); throws
// InputError or WorkerError when it cannot start.
using ReferenceSourceFactory =
    std::function<std::unique_ptr<ReferenceSource>(const Task& task, const DeviceInfo& device)>;

}  // namespace kf
