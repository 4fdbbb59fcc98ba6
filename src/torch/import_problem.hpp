#pragma once
// `kfoundry import`: a task folder from a PyTorch problem in KernelBench's form (class Model,
// get_inputs(), get_init_inputs(), module-level size constants). kb_inspect.py reads the problem
// in a child process; this side turns its answer into task.toml and copies the problem in as the
// task's torch reference. docs/pytorch.md describes the result, the signature order included.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "torch/starting_kernels.hpp"

namespace kf {

struct ImportOptions {
  std::string problem;  // the .py file
  std::string out_dir;  // "" = ./NAME, NAME the file's stem without trailing '_'
  double timeout_s = 300;
};

struct ImportedTask {
  std::string dir;   // the folder written
  std::string name;  // the task's name
  nlohmann::json inspection;
};

// The task's name for a problem file: its stem, trailing '_' dropped ("36_RMSNorm_.py" gives
// "36_RMSNorm").
std::string ImportedTaskName(const std::string& problem);

// task.toml's text for the helper's answer `inspection`, the problem copied in as `model_file`;
// where the answer names an op class, its starting kernels are listed as the task's templates
// (ImportProblem writes them). `signature`, where given, receives the kernel arguments in order.
// Throws InputError naming `problem` where the answer cannot make a task.
std::string TaskTomlFromInspection(const nlohmann::json& inspection, const std::string& name,
                                   const std::string& problem, const std::string& model_file,
                                   std::vector<SignatureArg>* signature = nullptr);

// Inspects the problem and writes the folder (task.toml, model.py and any starting kernels), then
// loads it back as a check. Throws InputError naming the problem file, with one line saying why,
// where it cannot.
ImportedTask ImportProblem(const ImportOptions& options);

}  // namespace kf
