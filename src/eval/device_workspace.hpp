#pragma once
// One size set's buffers on the device, made once per executor and kept for every candidate it
// judges: each argument's buffer between two guard zones (a patterned region before and after,
// so a write out of bounds is seen), the reference's own outputs, the candidate's previous output
// (to name a result carried between launches), a copy of the outputs for the determinism check,
// and in-out buffers' pristine contents; and the candidate's scratch buffers (its @scratch, guarded
// and poisoned like outputs). Inputs drawn from the generator are drawn again for every
// seed on the device; inputs that do not depend on the seed (formulas, constants) are made once,
// and every input's hash is checked after every candidate launch. Only figures cross the bus.
// The reference runs after the candidate, and its outputs are scrubbed before the next candidate
// launch: no reference result lies on the device while a candidate runs. Every buffer is scrubbed
// when it is allocated and before it is freed.

#include <memory>
#include <span>
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
  // Enqueue what a candidate launch needs first: its outputs poisoned and in-out buffers restored.
  void PrepareCandidate();
  // Enqueues the reference (its in-out buffers restored from their pristine copy first) on this
  // seed's inputs, into its own outputs; they count as dirty until ScrubReferences.
  DeviceStatus EnqueueReference(std::span<const LaunchStep> steps);
  // The reference's outputs from elsewhere (a reference source), one buffer per task argument
  // (outputs filled), written where a reference kernel would write them: dirty, like those.
  void SetReference(const std::vector<HostBuffer>& outputs);
  // This seed's inputs, read back: one buffer per task argument, inputs filled (an in-out
  // buffer's pristine contents), scalars and outputs empty.
  std::vector<HostBuffer> ReadInputs();
  // Enqueues the scrubbing of the reference's outputs if the reference ran since the last scrub;
  // to be called before any candidate launch, on every workspace.
  void ScrubReferences();
  // The candidate's scratch buffers (`counts` elements of each of `kernel.scratch`), each between
  // guard zones like every buffer, poisoned by PrepareCandidate and scanned by Inspect. Kept while
  // the next candidate's are the same; to be called before every candidate's first launch here.
  void UseScratch(const Kernel& kernel, const std::vector<int64_t>& counts);
  // The task's arguments, then the scratch buffers: what every candidate launch takes.
  const std::vector<KernelArg>& candidate_args() const { return candidate_args_; }
  // The task's arguments alone: what the baseline and the ghost replay take.
  std::span<const KernelArg> task_args() const {
    return std::span<const KernelArg>(candidate_args_).first(buffers_.size());
  }

  // Guards, input hashes and outputs against the reference (which ran after the candidate),
  // and against the candidate's previous output when asked.
  DeviceStatus Inspect(bool against_previous, const Tolerance& tol, LaunchInspection* out);
  // The determinism check: keep the outputs, launch again, count the elements that differ.
  void KeepOutputs();
  DeviceStatus DifferFromKept(int64_t* differing);
  // This seed's output becomes the previous one (the candidate's own, judged correct).
  void KeepPrevious();

  // One element of an output or of its reference, for a reason string (a small read).
  double OutputElement(size_t output, int64_t index, bool reference);
  // The task's output arguments, in order (`outputs` of an inspection follow it).
  const std::vector<size_t>& outputs() const { return outputs_; }

  struct Buffer;

 private:
  Device& device_;
  DeviceTools& tools_;
  SizeSet set_;
  Env env_;
  bool checks_;
  // Between guard zones, with a view of its data; the guards are scanned by Inspect.
  std::unique_ptr<Buffer> Guarded(const ArgSpec& arg, size_t count);

  std::vector<std::unique_ptr<Buffer>> buffers_;  // per argument (null for scalars)
  std::vector<std::unique_ptr<Buffer>> scratch_;  // the candidate's @scratch buffers
  std::vector<size_t> inputs_, outputs_;          // argument indices
  std::vector<KernelArg> reference_args_, candidate_args_;
  std::vector<uint64_t> input_hashes_;                // per argument, inputs only
  std::vector<std::pair<size_t, int>> drawn_hashes_;  // tickets of the last Draw's hashes
  bool references_dirty_ = false;                     // the reference ran since the last scrub
  // Test-only ($KF_TEST_LEAK_REFERENCE): the harness bug the ghost replay exists to catch, the
  // reference's output copied into the candidate's buffers.
  bool leak_for_test_ = false;
};

}  // namespace kf
