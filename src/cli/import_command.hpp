#pragma once
// `kfoundry import PROBLEM.py [-o DIR]`: a task folder from a PyTorch problem (docs/pytorch.md).

#include "torch/import_problem.hpp"

namespace kf {

// Writes the folder and says what it holds; a problem it cannot import throws InputError (exit 2).
int RunImport(const ImportOptions& options);

}  // namespace kf
