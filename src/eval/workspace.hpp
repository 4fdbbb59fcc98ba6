#pragma once
// The buffers of one size set on a device, with host copies: inputs drawn from the task's
// generators, outputs poisoned before every launch, inputs checksummed so a launch that wrote
// into one is caught; and the launch geometry of a kernel at those sizes.

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/device.hpp"
#include "core/task.hpp"
#include "eval/inputs.hpp"

namespace kf {

struct Workspace {
  Env env;
  std::vector<HostBuffer> host;      // per argument (empty for scalars)
  std::vector<DeviceBuffer> device;  // per argument (empty for scalars)
  std::vector<KernelArg> args;
  std::vector<uint64_t> input_sums;  // per argument, inputs only
};

// A failure of the harness or of the device underneath, not of the candidate.
class ToolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void Must(const DeviceStatus& s, const char* what);

// The kernel argument of a scalar parameter at these sizes.
KernelArg ScalarArg(const ArgSpec& a, const Env& env);

Workspace MakeWorkspace(Device& device, const Task& task, const Sizes& sizes, uint64_t seed);
// Draws fresh inputs into an existing workspace (same device buffers).
void RefillInputs(const Task& task, Workspace& ws, uint64_t seed);
// Uploads inputs (all of them, or only in-out ones) and poisons outputs.
void PrepareLaunch(Device& device, const Task& task, Workspace& ws, bool upload_inputs);
std::vector<HostBuffer> ReadOutputs(Device& device, const Task& task, const Workspace& ws);
// Names the first input the launch changed, or "".
std::string ModifiedInput(Device& device, const Task& task, const Workspace& ws);
// Elements of the outputs that differ bit for bit between two launches.
int64_t DifferingElements(const Task& task, const std::vector<HostBuffer>& a,
                          const std::vector<HostBuffer>& b);
// Grid, block and dynamic shared memory of one launch at `config` and sizes; throws ExprError for a
// non-positive extent or negative shared memory.
Launch MakeLaunch(const LaunchRule& rule, const Config& config, const Env& sizes);

// A kernel's entry points, loaded from one compiled module: one per launch rule, in order.
using LoadedKernels = std::vector<std::unique_ptr<LoadedKernel>>;
// Loads every symbol of `artifact`; empty, with `error` set, when one does not load.
LoadedKernels LoadKernels(Device& device, const Artifact& artifact, std::string* error);
// The launch sequence of `kernel` at `config` and sizes (MakeLaunch of each launch rule, with its
// loaded entry point); throws ExprError as MakeLaunch does, naming the entry point when several.
std::vector<LaunchStep> MakeSteps(const Kernel& kernel, const LoadedKernels& loaded,
                                  const Config& config, const Env& sizes);
// The element count of each scratch buffer of `kernel` at `config` and sizes; throws ExprError for
// a negative count.
std::vector<int64_t> ScratchCounts(const Kernel& kernel, const Config& config, const Env& sizes);

}  // namespace kf
