#pragma once
// Host-side buffers for one launch: fresh inputs drawn from the task's generators, output poison
// patterns, and checksums that tell whether a kernel wrote into its inputs.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/task.hpp"

namespace kf {

struct HostBuffer {
  DType dtype = DType::kF32;
  size_t count = 0;
  std::vector<std::byte> bytes;
};

// Fills one input buffer from its generator with seed `seed` (sizes bound in `sizes_env`).
HostBuffer GenerateInput(const ArgSpec& arg, const Env& sizes_env, uint64_t seed);

// A 32-bit fill pattern that reads as NaN for floating types and as 0xDEADBEEF-like garbage for
// integers; an element still holding it after a launch was never written.
uint32_t PoisonPattern(DType dtype);
bool IsPoison(const HostBuffer& buffer, size_t i, uint32_t pattern);

uint64_t Checksum(const std::vector<std::byte>& bytes);

// A seed nobody chose: time, address and a counter mixed.
uint64_t FreshSeed();

}  // namespace kf
