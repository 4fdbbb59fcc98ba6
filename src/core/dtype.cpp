#include "core/dtype.hpp"

#include <cmath>
#include <cstring>

namespace kf {

std::optional<DType> ParseDType(std::string_view name) {
  if (name == "f16" || name == "half" || name == "float16") return DType::kF16;
  if (name == "f32" || name == "float" || name == "float32") return DType::kF32;
  if (name == "f64" || name == "double" || name == "float64") return DType::kF64;
  if (name == "i32" || name == "int" || name == "int32") return DType::kI32;
  if (name == "i64" || name == "long" || name == "int64") return DType::kI64;
  if (name == "u8" || name == "uint8") return DType::kU8;
  if (name == "bf16" || name == "bfloat16") return DType::kBF16;
  return std::nullopt;
}

std::string_view DTypeName(DType t) {
  switch (t) {
    case DType::kF16: return "f16";
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kU8: return "u8";
    case DType::kBF16: return "bf16";
  }
  return "?";
}

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kF16: return 2;
    case DType::kF32: return 4;
    case DType::kF64: return 8;
    case DType::kI32: return 4;
    case DType::kI64: return 8;
    case DType::kU8: return 1;
    case DType::kBF16: return 2;
  }
  return 0;
}

bool IsFloat(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 || t == DType::kF64;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));  // inf/nan
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow
  if (e <= 0) {                                               // subnormal or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half_mant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent
  return static_cast<uint16_t>(half);
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      x = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t FloatToBFloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  // Adding 0x7fff plus the kept part's lowest bit rounds to nearest, ties to even; a carry out of
  // the mantissa raises the exponent, and from the largest finite value reaches infinity.
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float BFloat16ToFloat(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

double LoadElement(const std::byte* data, DType t, size_t i) {
  const std::byte* p = data + i * DTypeSize(t);
  switch (t) {
    case DType::kF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return HalfToFloat(h);
    }
    case DType::kBF16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return BFloat16ToFloat(h);
    }
    case DType::kF32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DType::kF64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case DType::kI32: {
      int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case DType::kI64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return static_cast<double>(v);
    }
    case DType::kU8: return static_cast<double>(static_cast<uint8_t>(*p));
  }
  return 0;
}

void StoreElement(std::byte* data, DType t, size_t i, double value) {
  std::byte* p = data + i * DTypeSize(t);
  switch (t) {
    case DType::kF16: {
      uint16_t h = FloatToHalf(static_cast<float>(value));
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::kBF16: {
      uint16_t h = FloatToBFloat16(static_cast<float>(value));
      std::memcpy(p, &h, 2);
      return;
    }
    case DType::kF32: {
      float f = static_cast<float>(value);
      std::memcpy(p, &f, 4);
      return;
    }
    case DType::kF64: std::memcpy(p, &value, 8); return;
    case DType::kI32: {
      auto v = static_cast<int32_t>(std::llround(value));
      std::memcpy(p, &v, 4);
      return;
    }
    case DType::kI64: {
      auto v = static_cast<int64_t>(std::llround(value));
      std::memcpy(p, &v, 8);
      return;
    }
    case DType::kU8: *p = static_cast<std::byte>(static_cast<uint8_t>(std::llround(value))); return;
  }
}

}  // namespace kf
