#pragma once
// Element types of task buffers and their host-side conversions (fp16 and bfloat16 included, done
// in software so the host needs no half-precision support).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kf {

enum class DType { kF16, kF32, kF64, kI32, kI64, kU8, kBF16 };

std::optional<DType> ParseDType(std::string_view name);
std::string_view DTypeName(DType t);
size_t DTypeSize(DType t);
bool IsFloat(DType t);

uint16_t FloatToHalf(float f);  // round to nearest even, with overflow to infinity
float HalfToFloat(uint16_t h);
// bfloat16 (1 sign, 8 exponent, 7 mantissa bits: the top half of a float): round to nearest even,
// overflow to infinity, a NaN stays a (quiet) NaN.
uint16_t FloatToBFloat16(float f);
float BFloat16ToFloat(uint16_t b);

// Reads element `i` of a host buffer of type `t` as a double, and writes one.
double LoadElement(const std::byte* data, DType t, size_t i);
void StoreElement(std::byte* data, DType t, size_t i, double value);

}  // namespace kf
