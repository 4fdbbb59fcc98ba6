#pragma once
// The CUDA backend: driver API + NVRTC, both loaded at run time. Kernels compile to a cubin for
// the device's own architecture (sm_90 on an H200), never to generic PTX.

#include <memory>

#include "backend/device.hpp"

namespace kf {

std::unique_ptr<Backend> MakeCudaBackend();

}  // namespace kf
