#pragma once
// Starting kernels for an imported problem (issue 31, part 3): where kb_inspect.py recognised the
// problem's forward as one of the library's op classes (its answer's "op"), import writes the
// CUDA and OpenCL templates of src/torch/templates for that class into the task folder, the
// placeholders replaced by the task's own signature (in each language's types), tensor names and
// size expressions, and lists them as the task's templates, so `kfoundry optimize` with the
// built-in proposer has kernels to start from on a GPU (CUDA) and on PoCL (OpenCL).

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/kernel.hpp"

namespace kf {

// One kernel argument as import writes it, in the signature's order.
struct SignatureArg {
  std::string name;
  DType dtype = DType::kF32;
  bool tensor = true;  // false: a size scalar
  bool output = false;
};

struct StartingKernel {
  std::string file;  // the name in the task folder
  std::string text;
};

// The task's op_class for the inspector's `op` (null: "torch", no starting kernels).
std::string OpClassOf(const nlohmann::json& op);

// The template files in `lang` a task of this `op` lists (none where op is null or of no known
// class).
std::vector<std::string> StartingKernelFiles(const nlohmann::json& op, Language lang);

// The task.toml value of `templates` for this `op`: `{ cuda = [...], opencl = [...] }`.
std::string StartingKernelsToml(const nlohmann::json& op);

// The starting kernels' texts in both languages, read from `templates_dir` and filled in for the
// signature `args` (inputs, parameters, outputs, sizes, as import orders them; `inputs` and
// `parameters` count the first two groups). Throws std::runtime_error where a template cannot be
// read.
std::vector<StartingKernel> StartingKernels(const nlohmann::json& op,
                                            const std::vector<SignatureArg>& args, size_t inputs,
                                            size_t parameters, const std::string& templates_dir);

}  // namespace kf
