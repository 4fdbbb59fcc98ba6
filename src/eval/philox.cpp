#include "eval/philox.hpp"

#include <cstring>

namespace kf {

std::array<uint32_t, 4> Philox4x32(uint64_t index, uint32_t stream, uint64_t seed) {
  uint32_t c0 = static_cast<uint32_t>(index), c1 = static_cast<uint32_t>(index >> 32), c2 = stream,
           c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = uint64_t{0xD2511F53u} * c0, p1 = uint64_t{0xCD9E8D57u} * c2;
    uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {c0, c1, c2, c3};
}

namespace {

float Unit(uint32_t x) {
  return static_cast<float>(x >> 8) * 5.9604644775390625e-08f;
}

}  // namespace

float DrawnValue(InitSpec::Kind kind, float a, float b, uint64_t seed, uint32_t stream,
                 uint64_t index) {
  std::array<uint32_t, 4> x = Philox4x32(index, stream, seed);
  // The same operations in the same order as the kernel, each rounded on its own.
  if (kind == InitSpec::Kind::kNormal) {
    volatile float s = Unit(x[0]) + Unit(x[1]);
    s = s + Unit(x[2]);
    s = s + Unit(x[3]);
    volatile float z = (s - 2.0f);
    z = z * 1.7320508075688772f;
    volatile float t = b * z;
    return a + t;
  }
  volatile float span = b - a;
  volatile float t = span * Unit(x[0]);
  return a + t;
}

float DrawUpperBound(InitSpec::Kind kind, double a, double b) {
  // randint: low + (high - low) * u, u < 1, truncated to the integer type (the floor: low >= 0).
  // From 0 the product stays below high (high <= 2^24); above 0 the sum may round up to high, so
  // the draw stops 1/64 short of it (high <= 2^16, where floats are at most 1/256 apart).
  if (kind == InitSpec::Kind::kRandInt && a > 0) return static_cast<float>(b - 1.0 / 64);
  return static_cast<float>(b);
}

HostBuffer DrawOnHost(DType dtype, size_t count, InitSpec::Kind kind, double a, double b,
                      uint64_t seed, uint32_t stream) {
  HostBuffer h;
  h.dtype = dtype;
  h.count = count;
  h.bytes.resize(count * DTypeSize(dtype));
  for (size_t i = 0; i < count; ++i) {
    float v = DrawnValue(kind, static_cast<float>(a), DrawUpperBound(kind, a, b), seed, stream, i);
    switch (dtype) {
      case DType::kF16: {
        uint16_t half = FloatToHalf(v);
        std::memcpy(h.bytes.data() + 2 * i, &half, 2);
        break;
      }
      case DType::kBF16: {
        uint16_t bf = FloatToBFloat16(v);
        std::memcpy(h.bytes.data() + 2 * i, &bf, 2);
        break;
      }
      case DType::kF32: std::memcpy(h.bytes.data() + 4 * i, &v, 4); break;
      case DType::kF64: {
        double d = v;
        std::memcpy(h.bytes.data() + 8 * i, &d, 8);
        break;
      }
      case DType::kI32: {
        int32_t n = static_cast<int32_t>(v);
        std::memcpy(h.bytes.data() + 4 * i, &n, 4);
        break;
      }
      case DType::kI64: {
        int64_t n = static_cast<int64_t>(v);
        std::memcpy(h.bytes.data() + 8 * i, &n, 8);
        break;
      }
      case DType::kU8: h.bytes[i] = static_cast<std::byte>(static_cast<uint32_t>(v)); break;
    }
  }
  return h;
}

}  // namespace kf
