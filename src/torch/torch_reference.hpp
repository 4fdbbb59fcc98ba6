#pragma once
// The reference process of a task whose reference is a PyTorch module (docs/pytorch.md): a python3
// with PyTorch running src/torch/kb_reference.py --serve, started and supervised as an executor is
// (a WorkerProcess: JSON lines on fds 3 and 4, stderr passed on, a deadline on every answer, killed
// past it), and restarted on the next request after a failure. Tensors cross as raw files, one
// per argument, in a private temporary folder (mode 0700) whose files are removed once read;
// the request is their JSON header (name, dtype, shape, file). PyTorch runs on the kernel's
// device side: CUDA for a CUDA device, the CPU otherwise (PoCL, say). TF32 stays off unless the
// task's precision is "tf32".

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "eval/reference_source.hpp"
#include "eval/worker_process.hpp"

namespace kf {

class TorchReference : public ReferenceSource {
 public:
  // Starts the process; throws WorkerError when no python3 with PyTorch is found (exit code 3).
  // `timeout_s` bounds the start and every answer.
  TorchReference(const Task& task, const DeviceInfo& device, double timeout_s);
  ~TorchReference() override;

  std::vector<HostBuffer> Outputs(const SizeSet& set, const std::vector<HostBuffer>& args) override;
  std::vector<BaselineRuns> TimeBaselines(const SizeSet& set, const std::vector<HostBuffer>& args,
                                          const EvalSettings& settings, int64_t flush_bytes,
                                          bool eager_only) override;
  // Where PyTorch runs, as its process said: "cpu (PyTorch 1.13.0, 2 threads)".
  const std::string& device_label() const { return label_; }

 private:
  void Start();
  // The request's argument list, the inputs written to files.
  nlohmann::json WriteArgs(const SizeSet& set, const std::vector<HostBuffer>& args,
                           bool with_outputs);
  // Sends `request` and waits for its answer; throws InputError naming the problem file on an
  // error answer, a deadline passed (the process killed) or a process that died.
  nlohmann::json Ask(nlohmann::json request, const std::string& what);
  void RemoveFiles();

  const Task& task_;
  std::string problem_;  // the module's path
  std::string device_;   // "cpu" or "cuda"
  bool allow_tf32_;
  double timeout_s_;
  std::string dir_;  // the private folder of the tensors' files
  std::string label_;
  std::unique_ptr<WorkerProcess> process_;
  int next_id_ = 0;
};

// The factory the evaluator takes (EvalOptions::reference_source); the deadline is
// $KF_TORCH_TIMEOUT seconds, 300 by default.
ReferenceSourceFactory TorchReferenceFactory();

}  // namespace kf
