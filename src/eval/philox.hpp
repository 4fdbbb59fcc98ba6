#pragma once
// The counter-based generator behind device-drawn inputs, on the host: Philox4x32-10 of
// (element index, stream) under the key (seed), and the same float arithmetic the device kernel
// does (device_tools_source.cpp), so the host reproduces any drawn element bit for bit.

#include <array>
#include <cstdint>

#include "core/task.hpp"
#include "eval/inputs.hpp"

namespace kf {

std::array<uint32_t, 4> Philox4x32(uint64_t index, uint32_t stream, uint64_t seed);

// Element `index` as the device draws it, before conversion to the buffer's type: kNormal is the
// scaled sum of four uniforms with mean a and deviation b (a bell cut at a +- 3.46 b), kUniform
// is uniform in [a, b).
float DrawnValue(InitSpec::Kind kind, float a, float b, uint64_t seed, uint32_t stream,
                 uint64_t index);

// The upper bound the device's draw is given for [a, b): b, or for kRandInt from above 0 a little
// less, so the float sum never rounds up to b (see philox.cpp). kRandInt draws like kUniform.
float DrawUpperBound(InitSpec::Kind kind, double a, double b);

// A whole buffer of `count` elements as the device draws it.
HostBuffer DrawOnHost(DType dtype, size_t count, InitSpec::Kind kind, double a, double b,
                      uint64_t seed, uint32_t stream);

}  // namespace kf
