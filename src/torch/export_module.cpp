#include "torch/export_module.hpp"

#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/input_error.hpp"

namespace kf {

// The runtime's two parts, built in from src/torch/export_expr.py and export_runtime.py.
extern const char* const kExportExprPy;
extern const char* const kExportRuntimePy;

namespace {

std::string Identifier(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "t_" + out;
  return out;
}

// A JSON string is a Python string literal too (its escapes are Python's).
std::string Quoted(const std::string& s) {
  return nlohmann::json(s).dump();
}

std::string PythonNumber(double v) {
  nlohmann::json j = v;
  if (v == static_cast<double>(static_cast<long long>(v))) j = static_cast<long long>(v);
  return j.dump();
}

std::string Tuple(const std::vector<std::string>& items) {
  std::string out = "(";
  for (const std::string& i : items) out += i + ", ";
  if (items.size() > 1) out.resize(out.size() - 2);
  return out + ")";
}

std::string Integer(const Expr& e, const std::string& what) {
  return fmt::format("_kf_integer({}, {})", e.ToPython(), Quoted(what + " '" + e.text() + "'"));
}

std::string Dims(const std::vector<Expr>& exprs, const std::string& what) {
  std::vector<std::string> dims;
  for (size_t d = 0; d < exprs.size(); ++d)
    dims.push_back(Integer(exprs[d], fmt::format("{} dimension {}", what, d)));
  return Tuple(dims);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "reference", "cannot read the PyTorch reference");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The signature, the sizes and where the inputs' shapes give them.
std::string SignatureSpec(const Task& task, const ExportOrigin& o) {
  std::string args, dims;
  int input = 0;
  for (const ArgSpec& a : task.args) {
    const char* role = a.role == ArgRole::kOut ? "out" : a.role == ArgRole::kInOut ? "inout" : "in";
    args +=
        fmt::format("    {{\"name\": {}, \"role\": \"{}\", \"dtype\": \"{}\", \"buffer\": {}}},\n",
                    Quoted(a.name), role, DTypeName(a.dtype), a.is_buffer ? "True" : "False");
    if (!a.is_buffer || a.role == ArgRole::kOut) continue;
    for (size_t d = 0; d < a.shape.size(); ++d) {
      std::vector<std::string> vars = a.shape[d].Variables();
      // A dimension that is one size alone gives that size.
      if (vars.size() == 1 && a.shape[d].ToPython() == Expr::Parse(vars[0]).ToPython() &&
          std::find(task.size_names.begin(), task.size_names.end(), vars[0]) !=
              task.size_names.end())
        dims += fmt::format("    ({}, {}, {}),\n", input, d, Quoted(vars[0]));
    }
    ++input;
  }
  std::string names, sizes, settings;
  for (const std::string& s : task.size_names) {
    names += Quoted(s) + ", ";
    sizes += fmt::format("{}: {}, ", Quoted(s), PythonNumber(o.sizes.sizes.at(s)));
  }
  for (const auto& [name, fallback] : task.settings) {
    auto it = o.sizes.sizes.find(name);
    settings += fmt::format("{}: {}, ", Quoted(name),
                            PythonNumber(it == o.sizes.sizes.end() ? fallback : it->second));
  }
  return fmt::format(
      "# The task's signature, in order (inputs, the module's parameters and buffers, outputs, "
      "sizes).\n_ARGS = [\n{}]\n"
      "# (input buffer, dimension, size): where an input's shape gives a size.\n"
      "_SIZE_DIMS = [\n{}]\n_SIZE_NAMES = [{}]\n"
      "# The sizes at the run's benchmark set '{}': a size no input dimension gives alone is "
      "fixed at its value here.\n_EXPORT_SIZES = {{{}}}\n_SETTINGS = {{{}}}\n",
      args, dims, names, o.sizes.name, sizes, settings);
}

// Shapes, scalar values, launch rules and tolerance as Python functions of `v` (sizes, settings
// and the configuration by name).
std::string RuleSpec(const Task& task, const Kernel& kernel) {
  std::string shapes, scalars;
  for (const ArgSpec& a : task.args) {
    shapes += "        " + (a.is_buffer ? Dims(a.shape, a.name + " shape") : "None") + ",\n";
    std::string value = "None";
    if (!a.is_buffer)
      value = a.dtype == DType::kF32 || a.dtype == DType::kF64
                  ? fmt::format("float({})", a.value.ToPython())
                  : Integer(a.value, "scalar " + a.name);
    scalars += "        " + value + ",\n";
  }
  // One launch per entry point, in the order the candidate launches them.
  std::string launch, launches;
  for (size_t i = 0; i < kernel.launches.size(); ++i) {
    const LaunchRule& l = kernel.launches[i];
    launch += fmt::format(
        "def _launch_{}(v):\n    \"\"\"@kernel {}: (grid, block, dynamic shared bytes).\"\"\"\n"
        "    return ({}, {}, {})\n\n\n",
        i, l.entry, Dims(l.grid, "@grid"), Dims(l.block, "@block"),
        l.shared ? Integer(*l.shared, "@shared") : "0");
    launches += fmt::format("({}, _launch_{}), ", Quoted(l.entry), i);
  }
  launch += fmt::format("_LAUNCHES = [{}]\n", launches);
  // The candidate's scratch buffers, after the signature's arguments: (name, type), and their
  // element counts.
  std::string scratch, counts;
  for (const ScratchSpec& s : kernel.scratch) {
    scratch += fmt::format("({}, {}), ", Quoted(s.name), Quoted(std::string(DTypeName(s.dtype))));
    counts += "        " + Integer(s.count, "@scratch " + s.name) + ",\n";
  }
  launch += fmt::format("_SCRATCH = [{}]\n\n\ndef _scratch_counts(v):\n    return [\n{}    ]\n",
                        scratch, counts);
  return fmt::format(
      "def _shapes(v):\n    return [\n{}    ]\n\n\n"
      "def _scalars(v):\n    return [\n{}    ]\n\n\n{}\n\n"
      "def _tolerance(v):\n    return (float({}), float({}), {})\n",
      shapes, scalars, launch, task.tolerance.atol.ToPython(), task.tolerance.rtol.ToPython(),
      PythonNumber(task.tolerance.max_bad_ratio));
}

}  // namespace

std::string PythonStringLiteral(const std::string& text) {
  bool raw_ok = text.find("'''") == std::string::npos && text.find('\r') == std::string::npos &&
                (text.empty() || (text.back() != '\\' && text.back() != '\''));
  return raw_ok ? "r'''" + text + "'''" : Quoted(text);
}

std::string TorchModuleSource(const Task& task, const Kernel& kernel, const Config& config,
                              const ExportOrigin& o) {
  if (task.torch_reference.empty())
    throw InputError(task.dir + "/task.toml", 0, "kernels.reference",
                     "export --torch needs a task with a PyTorch reference (reference = { torch "
                     "= \"model.py\" }, as kfoundry import writes)");
  CheckKernelSignature(task, kernel);
  Env env;
  BindConfig(config, env);
  std::string defines, bound;
  // The task's own defines (a variant's macros) first, as every compile passes them.
  for (const auto& [k, v] : CompileRequestFor(kernel, config, task.defines).defines)
    defines += fmt::format("({}, {}), ", Quoted(k), Quoted(v));
  for (const auto& [k, v] : env.entries())
    bound += fmt::format("{}: {}, ", Quoted(k), PythonNumber(v));
  const std::string task_id = Identifier(task.name);
  const std::string lang(LanguageName(kernel.language));
  std::string header = fmt::format(
      R"("""{task}: the best kernel of kfoundry run {run}, as a PyTorch module.

Written by `kfoundry export {run} --torch`. The kernel ({lang}, entry point {entry}, {origin},
configuration {config}) was re-verified on {device} at a median speedup of {speedup:.3f}x.

    from {module} import ModelNew          # KernelBench's interface: Model's constructor and
    model = ModelNew(*get_init_inputs())   # forward; ModelNew(..., check=True) compares the first
    out = model(*inputs)                   # call with the reference Model at the task's tolerance

`kfoundry_op(tensors)` runs the kernel alone (forward's inputs, then Model's parameters and
buffers; returns the outputs): a torch.library operator where this PyTorch has torch.library
(torch.library.custom_op from 2.4, a Library definition before), else a plain function. Forward
only: it has no gradient. The launch rule, the outputs' shapes and the scalar arguments are
computed from the input tensors' shapes by the functions below (the task's expressions in
Python); a size that no input dimension is alone stays at the value of the run's benchmark set.
An OpenCL kernel runs through pyopencl on any OpenCL device (PoCL on a CPU: the tensors are
copied there and back); a CUDA kernel is compiled by torch.utils.cpp_extension.load_inline and
needs its tensors on a CUDA device. See docs/pytorch.md, "Exporting the best kernel".
"""
)",
      fmt::arg("task", task.name), fmt::arg("run", o.run), fmt::arg("lang", lang),
      fmt::arg("entry", kernel.EntryNames()), fmt::arg("origin", o.origin),
      fmt::arg("config", ConfigToString(config)), fmt::arg("device", o.device),
      fmt::arg("speedup", o.speedup), fmt::arg("module", o.module));
  std::string spec = fmt::format(
      "_TASK = {}\n_LANGUAGE = {}\n# The winning configuration: -D defines, and the values the "
      "launch rule reads.\n_DEFINES = [{}]\n_CONFIG = {{{}}}\n\n{}\n{}\n\n"
      "_KERNEL_SOURCE = {}\n\n_PROBLEM_SOURCE = {}\n\n",
      Quoted(task_id), Quoted(lang), defines, bound, SignatureSpec(task, o), RuleSpec(task, kernel),
      PythonStringLiteral(WithDefaults(kernel, config)),
      PythonStringLiteral(ReadFile(task.PathOf(task.torch_reference))));
  return header + kExportExprPy + "\n\n" + spec + kExportRuntimePy;
}

}  // namespace kf
