#pragma once
// One size set's buffers on the device, made once per executor and kept for every candidate it
// judges: each argument's buffer between two guard zones (a patterned region before and after,
// so a write out of bounds is seen), the reference's own outputs (and the previous seed's, to
// name a result carried between launches), a copy of the outputs for the determinism check, and
// in-out buffers' pristine contents. Inputs drawn from the generator are drawn again for every
// seed on the device; inputs that do not depend on the seed (formulas, constants) are made once,
// and every input's hash is checked after every candidate launch. Only figures cross the bus.

#include <memory>
#include <string>
#include <vector>

#include "backend/device.hpp"
#include "core/task.hpp"
#include "eval/compare.hpp"
#include "eval/device_tools.hpp"

namespace kf {

// What a candidate launch left behind, read in one round trip.
struct LaunchInspection {
  std::string guard;                 // "wrote N bytes past the end of 'q_out'"; "" when none
  std::string modified_input;        // the first input the launch changed; ""
  std::vector<Figures> outputs;      // per output, against this seed's reference
  std::vector<Figures> vs_previous;  // per output, against the previous seed's (when asked)
};

class DeviceWorkspace {
 public:
  // `checks`: a check size set (keeps the previous reference and a copy for determinism).
  // Throws ToolError when the device cannot hold it.
  DeviceWorkspace(Device& device, DeviceTools& tools, const Task& task, const SizeSet& set,
                  bool checks);
  ~DeviceWorkspace();
  DeviceWorkspace(const DeviceWorkspace&) = delete;
  DeviceWorkspace& operator=(const DeviceWorkspace&) = delete;

  const Env& env() const { return env_; }
  const SizeSet& set() const { return set_; }

  // Fresh inputs from `seed`, and their hashes, enqueued: the hashes are read with the next
  // Inspect's figures (one round trip for both).
  DeviceStatus Draw(uint64_t seed);
  // Enqueue what a launch needs first: the reference's in-out buffers from their pristine copy;
  // the candidate's outputs poisoned and in-out buffers restored.
  void PrepareReference();
  void PrepareCandidate();
  const std::vector<KernelArg>& reference_args() const { return reference_args_; }
  const std::vector<KernelArg>& candidate_args() const { return candidate_args_; }

  // Guards, input hashes and outputs against the reference, after a candidate launch.
  DeviceStatus Inspect(bool against_previous, const Tolerance& tol, LaunchInspection* out);
  // The determinism check: keep the outputs, launch again, count the elements that differ.
  void KeepOutputs();
  DeviceStatus DifferFromKept(int64_t* differing);
  // This seed's reference becomes the previous one.
  void SwapReferences();

  // One element of an output or of its reference, for a reason string (a small read).
  double OutputElement(size_t output, int64_t index, bool reference);
  // The task's output arguments, in order (`outputs` of an inspection follow it).
  const std::vector<size_t>& outputs() const { return outputs_; }

  struct Buffer;

 private:
  Device& device_;
  DeviceTools& tools_;
  const Task& task_;
  SizeSet set_;
  Env env_;
  bool checks_;
  std::vector<std::unique_ptr<Buffer>> buffers_;  // per argument (null for scalars)
  std::vector<size_t> inputs_, outputs_;          // argument indices
  std::vector<KernelArg> reference_args_, candidate_args_;
  std::vector<uint64_t> input_hashes_;                // per argument, inputs only
  std::vector<std::pair<size_t, int>> drawn_hashes_;  // tickets of the last Draw's hashes
};

}  // namespace kf
