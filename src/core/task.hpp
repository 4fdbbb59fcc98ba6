#pragma once
// A task: what to compute (the kernel signature), how to make inputs, which sizes to check and
// benchmark, how close is close enough, the cost model, and the reference and baseline kernels.
// Loaded from `task.toml` in a task folder; the format is documented in docs/task-format.md.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/dtype.hpp"
#include "core/expr.hpp"
#include "core/kernel.hpp"

namespace kf {

enum class ArgRole { kIn, kOut, kInOut };

struct InitSpec {
  enum class Kind { kUniform, kNormal, kConstant, kFormula, kCsrRowPtr, kCsrColIdx, kRandInt };
  Kind kind = Kind::kNormal;
  double a = 0.0;  // uniform: low; normal: mean; constant: value
  double b = 1.0;  // uniform: high; normal: std
  Expr formula;    // kFormula: evaluated per element with `index` names bound to coordinates
  std::vector<std::string> index;
  // kCsrRowPtr / kCsrColIdx: one part of the generated CSR matrix (eval/sparse.hpp) with these
  // rows, columns and nonzeros (expressions over sizes), seed and skew; fixed by the task file.
  Expr rows, cols, nnz;
  uint64_t seed = 0;
  double skew = 0.0;
  // kRandInt: integers drawn uniformly in [low, high), expressions over sizes and settings
  // evaluated at each size set (torch.randint(0, num_classes, ...) of an imported problem).
  Expr low, high;
  // The bounds at one size set: `a` and `b` for kRandInt, else the fixed `a` and `b`.
  std::pair<double, double> BoundsAt(const Env& sizes_env) const;
};

struct ArgSpec {
  std::string name;
  bool is_buffer = true;
  DType dtype = DType::kF32;
  std::vector<Expr> shape;  // buffers
  ArgRole role = ArgRole::kIn;
  InitSpec init;  // inputs
  Expr value;     // scalars: an expression over sizes and settings
  int line = 0;
};

// A size set's values by name: every size (a positive integer, held exactly) and every setting
// (any finite number: the set's own value or the task's default). SizesEnv binds them all, so
// scalar values, input formulas, cost formulas and launch rules read settings like sizes.
using Sizes = std::map<std::string, double>;

struct SizeSet {
  std::string name;
  std::string device_class;  // benchmark sets: "gpu", "cpu", "other" or "" (any)
  Sizes sizes;               // sizes and settings
};

// The tolerance at one size set.
struct Tolerance {
  double atol = 1e-3;
  double rtol = 1e-3;
  double max_bad_ratio = 0.0;  // share of elements allowed past 1% relative error
};

// The task's tolerance: atol and rtol are expressions over sizes and settings, so a reduction's
// tolerance can grow with its length (`atol = "1e-6 * sqrt(N)"`).
struct ToleranceRule {
  Expr atol = Expr::Parse("0.001");
  Expr rtol = Expr::Parse("0.001");
  double max_bad_ratio = 0.0;
  Tolerance At(const Sizes& sizes) const;
};

struct Task {
  std::string name;  // task.toml's name; with a variant applied, "NAME.VARIANT"
  std::string dir;   // absolute folder path (a variant's is its task's)
  // The folder's content hash (core/identity.hpp: TaskContentId), with ".VARIANT" for a variant.
  std::string id;
  // The variant applied ("" none: the task as written); `defines` are its macros, passed to every
  // kernel of the task (reference, baseline, templates, candidates) before the configuration's.
  std::string variant;
  Config defines;
  std::vector<std::string> variants;  // the variants task.toml declares ([variants.NAME])
  std::string op_class;
  std::string description;
  std::vector<std::string> size_names;
  // Settings: name → default. Each size set's `sizes` holds the value that set runs with.
  std::map<std::string, double> settings;
  std::vector<ArgSpec> args;
  std::vector<SizeSet> check_sizes;
  std::vector<SizeSet> bench_sizes;
  ToleranceRule tolerance;
  Expr min_bytes;
  std::optional<Expr> flops;
  // The arithmetic a candidate may use ("fp32", "tf32", "fp16-accumulate-fp32",
  // "bf16-accumulate-fp32"); "" leaves it open. The evaluator probes for less
  // (precision_probe.hpp).
  std::string precision;
  std::map<Language, std::string> reference;  // language → file name inside dir
  // A PyTorch module in KernelBench's form (`reference = { torch = "model.py" }`), or "" when the
  // reference is kernels only. With it, a baseline kernel is optional (docs/pytorch.md).
  std::string torch_reference;
  std::map<Language, std::string> baseline;
  std::map<Language, std::vector<std::string>> templates;

  std::string PathOf(const std::string& file) const { return dir + "/" + file; }
  // The benchmark set named `name`, or (empty name) the first one for `device_class`, else the
  // first.
  const SizeSet& BenchSizes(const std::string& name, const std::string& device_class) const;
  std::vector<Language> Languages() const;
};

Env SizesEnv(const Sizes& sizes);
// The product of the shape's dimensions; throws ExprError when one is not a positive integer or
// the product passes 2^56.
int64_t ElementCount(const ArgSpec& arg, const Env& sizes_env);

// Loads `dir/task.toml`, as its variant `variant` when not empty (docs/task-format.md
// "Variants"); throws InputError naming the file, line and field on any defect (and nothing else:
// unknown keys included, see docs/task-format.md).
Task LoadTask(const std::string& dir, const std::string& variant = "");
// The same for `text` given as the content of `dir/task.toml` (kernel files are still looked up
// in `dir`); for tests and the fuzzer.
Task LoadTaskFromText(const std::string& dir, std::string_view text,
                      const std::string& variant = "");

// Checks that a kernel's entry point takes the task's arguments, in order; a name may carry a
// suffix after '_' (cos_t for cos). Throws InputError naming the kernel file.
void CheckKernelSignature(const Task& task, const Kernel& kernel);

}  // namespace kf
