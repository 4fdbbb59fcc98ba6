#include "eval/inputs.hpp"

#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "eval/parallel.hpp"
#include "eval/sparse.hpp"

namespace kf {

namespace {

// xoshiro256** seeded by splitmix64: fast enough for 10^8 elements, deterministic per seed.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& s : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      s = z ^ (z >> 31);
    }
  }
  uint64_t Next() {
    uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace

HostBuffer GenerateInput(const ArgSpec& arg, const Env& sizes_env, uint64_t seed) {
  HostBuffer b;
  b.dtype = arg.dtype;
  b.count = static_cast<size_t>(ElementCount(arg, sizes_env));
  b.bytes.resize(b.count * DTypeSize(arg.dtype));
  std::byte* data = b.bytes.data();
  const InitSpec& init = arg.init;
  // Random draws come in chunks of 2^20 elements, each from its own stream (seed, chunk), so the
  // work spreads over the cores and a seed gives the same values whatever the core count.
  constexpr size_t kChunk = size_t{1} << 20;
  auto stream = [seed](size_t chunk) { return Rng(seed ^ (0xd1b54a32d192ed03ull * (chunk + 1))); };
  switch (init.kind) {
    case InitSpec::Kind::kConstant:
      for (size_t i = 0; i < b.count; ++i) StoreElement(data, b.dtype, i, init.a);
      break;
    case InitSpec::Kind::kUniform:
      ForChunks(b.count, kChunk, [&](size_t begin, size_t end, size_t chunk) {
        Rng rng = stream(chunk);
        for (size_t i = begin; i < end; ++i)
          StoreElement(data, b.dtype, i, init.a + (init.b - init.a) * rng.Uniform());
      });
      break;
    case InitSpec::Kind::kRandInt: {  // integers in [low, high): the floor of a uniform draw
      const std::pair<double, double> bounds = init.BoundsAt(sizes_env);
      const double low = bounds.first, high = bounds.second;
      ForChunks(b.count, kChunk, [&](size_t begin, size_t end, size_t chunk) {
        Rng rng = stream(chunk);
        for (size_t i = begin; i < end; ++i)
          StoreElement(data, b.dtype, i,
                       std::min(high - 1, std::floor(low + (high - low) * rng.Uniform())));
      });
      break;
    }
    case InitSpec::Kind::kNormal:
      ForChunks(b.count, kChunk, [&](size_t begin, size_t end, size_t chunk) {
        Rng rng = stream(chunk);
        for (size_t i = begin; i < end; i += 2) {  // Box-Muller, two values per pair of draws
          double u1 = 1.0 - rng.Uniform(), u2 = rng.Uniform();
          double r = std::sqrt(-2.0 * std::log(u1));
          StoreElement(data, b.dtype, i, init.a + init.b * r * std::cos(2 * M_PI * u2));
          if (i + 1 < end)
            StoreElement(data, b.dtype, i + 1, init.a + init.b * r * std::sin(2 * M_PI * u2));
        }
      });
      break;
    case InitSpec::Kind::kFormula: {
      std::vector<int64_t> dims;
      for (const Expr& d : arg.shape) dims.push_back(d.EvalInt(sizes_env));
      Env env = sizes_env;
      std::vector<int64_t> idx(dims.size(), 0);
      for (const auto& name : init.index) env.Set(name, 0);
      for (size_t i = 0; i < b.count; ++i) {
        for (size_t d = 0; d < dims.size(); ++d)
          env.Set(init.index[d], static_cast<double>(idx[d]));
        StoreElement(data, b.dtype, i, init.formula.Eval(env));
        for (size_t d = dims.size(); d-- > 0;) {  // row-major increment
          if (++idx[d] < dims[d]) break;
          idx[d] = 0;
        }
      }
      break;
    }
    case InitSpec::Kind::kCsrRowPtr:
    case InitSpec::Kind::kCsrColIdx: {  // fixed by the task file: `seed` is not used
      const bool row_ptr = init.kind == InitSpec::Kind::kCsrRowPtr;
      CsrStructure csr = PowerLawCsr(init.rows.EvalInt(sizes_env), init.cols.EvalInt(sizes_env),
                                     init.nnz.EvalInt(sizes_env), init.seed, init.skew, !row_ptr);
      const std::vector<int64_t>& part = row_ptr ? csr.row_ptr : csr.col_idx;
      for (size_t i = 0; i < b.count; ++i)
        StoreElement(data, b.dtype, i, static_cast<double>(part[i]));
      break;
    }
  }
  return b;
}

uint32_t PoisonPattern(DType dtype) {
  switch (dtype) {
    case DType::kF16: return 0x7E5A7E5Au;   // two quiet NaN halves
    case DType::kBF16: return 0x7FDA7FDAu;  // two quiet NaN bfloat16s
    case DType::kF32: return 0x7FC0DEADu;   // a quiet NaN
    case DType::kF64: return 0x7FF8DEADu;   // low/high words form NaN with the high one
    default: return 0xDEADBEEFu;
  }
}

bool IsPoison(const HostBuffer& b, size_t i, uint32_t pattern) {
  size_t size = DTypeSize(b.dtype);
  const std::byte* p = b.bytes.data() + i * size;
  size_t offset = (i * size) % 4;  // where this element sits in the repeating 4-byte pattern
  unsigned char pat[4];
  std::memcpy(pat, &pattern, 4);
  for (size_t k = 0; k < size; ++k) {
    if (static_cast<unsigned char>(p[k]) != pat[(offset + k) % 4]) return false;
  }
  return true;
}

uint64_t Checksum(const std::vector<std::byte>& bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

uint64_t FreshSeed() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t boot = std::random_device{}();
  uint64_t t = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  uint64_t mix[3] = {t, boot, counter++};
  return XXH3_64bits(mix, sizeof(mix));
}

}  // namespace kf
