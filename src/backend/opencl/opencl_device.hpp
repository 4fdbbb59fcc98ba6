#pragma once
// The OpenCL backend, through the ICD loader: every platform's devices flattened into one index
// list (opencl:0, opencl:1, ...). Runs on PoCL (CPU) in tests and CI, and on GPU drivers.

#include <memory>

#include "backend/device.hpp"

namespace kf {

std::unique_ptr<Backend> MakeOpenCLBackend();

}  // namespace kf
