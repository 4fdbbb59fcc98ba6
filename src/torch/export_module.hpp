#pragma once
// `kfoundry export --torch`: a run's best kernel as a Python module a user imports
// (docs/pytorch.md "Exporting the best kernel"): KernelBench's ModelNew and a torch.library op
// that launch exactly that kernel and configuration, their launch rules, shapes and scalar
// arguments translated to Python (Expr::ToPython) and evaluated from the tensors' shapes. The
// module is the spec written here followed by a fixed runtime (export_expr.py, export_runtime.py,
// built into the binary).

#include <string>

#include "core/kernel.hpp"
#include "core/task.hpp"

namespace kf {

// Where the exported kernel came from, for the module's header, and the sizes a size no input
// dimension gives alone is fixed at.
struct ExportOrigin {
  std::string run, device, origin;
  std::string module;  // the module's name (its file's stem), for the usage it shows
  double speedup = 0;  // the median re-verified speedup
  SizeSet sizes;       // the benchmark set the run timed
};

// The module's text. Throws InputError when the task has no PyTorch reference or the kernel does
// not take the task's signature.
std::string TorchModuleSource(const Task& task, const Kernel& kernel, const Config& config,
                              const ExportOrigin& origin);

// `text` as a Python string literal: raw and triple-quoted where it can be (readable), else
// escaped.
std::string PythonStringLiteral(const std::string& text);

}  // namespace kf
