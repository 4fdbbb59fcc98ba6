// A stand-in for PyTorch's header with just what an exported module's CUDA launcher uses, so
// tests/integration/cli_export_test.cpp can compile the launcher with nvcc where PyTorch has no
// CUDA headers (Debian's CPU build). Not PyTorch's code.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>
namespace at {
struct Tensor {
  void* data_ptr() const { return nullptr; }
};
}  // namespace at
#define TORCH_CHECK(cond, ...) \
  do {                         \
    if (!(cond)) throw 1;      \
  } while (0)
