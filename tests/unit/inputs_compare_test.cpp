#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/task.hpp"
#include "eval/compare.hpp"
#include "eval/inputs.hpp"

namespace kf {
namespace {

ArgSpec Buffer(DType t, int64_t n, InitSpec init = {}) {
  ArgSpec a;
  a.name = "x";
  a.dtype = t;
  a.shape = {Expr::Parse(std::to_string(n))};
  a.init = std::move(init);
  return a;
}

TEST(Inputs, DeterministicPerSeedAndFreshAcrossSeeds) {
  ArgSpec a = Buffer(DType::kF16, 1001);
  EXPECT_EQ(GenerateInput(a, Env(), 7).bytes, GenerateInput(a, Env(), 7).bytes);
  EXPECT_NE(GenerateInput(a, Env(), 7).bytes, GenerateInput(a, Env(), 8).bytes);
  EXPECT_NE(FreshSeed(), FreshSeed());
}

TEST(Inputs, NormalHasTheRequestedMomentsAndSigns) {
  InitSpec init;
  init.kind = InitSpec::Kind::kNormal;
  init.a = 0.5;
  init.b = 2.0;
  HostBuffer b = GenerateInput(Buffer(DType::kF32, 200000, init), Env(), 1);
  double sum = 0, sq = 0;
  int negative = 0;
  for (size_t i = 0; i < b.count; ++i) {
    double v = LoadElement(b.bytes.data(), b.dtype, i);
    sum += v;
    sq += v * v;
    negative += v < 0;
  }
  double mean = sum / b.count, var = sq / b.count - mean * mean;
  EXPECT_NEAR(mean, 0.5, 0.03);
  EXPECT_NEAR(std::sqrt(var), 2.0, 0.03);
  EXPECT_GT(negative, 0);  // signed data, never only [0, 1)
}

TEST(Inputs, UniformStaysInRange) {
  InitSpec init;
  init.kind = InitSpec::Kind::kUniform;
  init.a = -3;
  init.b = -1;
  HostBuffer b = GenerateInput(Buffer(DType::kF64, 10000, init), Env(), 3);
  for (size_t i = 0; i < b.count; ++i) {
    double v = LoadElement(b.bytes.data(), b.dtype, i);
    ASSERT_GE(v, -3);
    ASSERT_LT(v, -1);
  }
}

// randint: integers in [low, high) with the bounds of the size set, every value reached.
TEST(Inputs, RandIntDrawsEveryIntegerInRangeOfTheSet) {
  InitSpec init;
  init.kind = InitSpec::Kind::kRandInt;
  init.low = Expr::Parse("2");
  init.high = Expr::Parse("C + 2");
  Env env;
  env.Set("C", 5);
  for (DType t : {DType::kI32, DType::kI64, DType::kU8}) {
    HostBuffer b = GenerateInput(Buffer(t, 5000, init), env, 4);
    std::vector<int> seen(7, 0);
    for (size_t i = 0; i < b.count; ++i) {
      double v = LoadElement(b.bytes.data(), b.dtype, i);
      ASSERT_EQ(v, std::floor(v));
      ASSERT_GE(v, 2) << DTypeName(t);
      ASSERT_LT(v, 7) << DTypeName(t);
      ++seen[static_cast<size_t>(v)];
    }
    for (int v = 2; v < 7; ++v) EXPECT_GT(seen[v], 800) << DTypeName(t) << " " << v;
  }
}

TEST(Inputs, FormulaTablesAreComputedPerCoordinate) {
  ArgSpec a;
  a.name = "cos";
  a.dtype = DType::kF32;
  a.shape = {Expr::Parse("S"), Expr::Parse("D // 2")};
  a.init.kind = InitSpec::Kind::kFormula;
  a.init.index = {"s", "i"};
  a.init.formula = Expr::Parse("cos(s * 500000 ** (-2 * i / D))");
  Env env;
  env.Set("S", 5);
  env.Set("D", 8);
  HostBuffer b = GenerateInput(a, env, 0);
  ASSERT_EQ(b.count, 20u);
  for (int s = 0; s < 5; ++s) {
    for (int i = 0; i < 4; ++i) {
      float want = static_cast<float>(std::cos(s * std::pow(500000.0, -2.0 * i / 8)));
      EXPECT_EQ(LoadElement(b.bytes.data(), b.dtype, static_cast<size_t>(s * 4 + i)), want)
          << s << "," << i;
    }
  }
}

HostBuffer Filled(DType t, std::vector<double> values) {
  HostBuffer b;
  b.dtype = t;
  b.count = values.size();
  b.bytes.resize(values.size() * DTypeSize(t));
  for (size_t i = 0; i < values.size(); ++i) StoreElement(b.bytes.data(), t, i, values[i]);
  return b;
}

TEST(Compare, PoisonReadsAsUnwrittenNotAsNaN) {
  HostBuffer ref = Filled(DType::kF16, {1, 2, 3, 4, 5});
  HostBuffer out = ref;
  uint32_t poison = PoisonPattern(DType::kF16);
  std::memcpy(out.bytes.data() + 2 * 2, &poison, 4);  // elements 2 and 3 untouched
  Tolerance tol;
  Figures f = CompareOutput(ref, out, poison, tol);
  EXPECT_EQ(f.unwritten, 2);
  EXPECT_EQ(f.nan_count, 0);
  EXPECT_EQ(f.first_bad, 2);
  EXPECT_TRUE(std::isnan(LoadElement(out.bytes.data(), DType::kF16, 2)));  // poison is NaN
}

TEST(Compare, PoisonPatternsAreNaNForEveryFloatType) {
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64}) {
    HostBuffer b;
    b.dtype = t;
    b.count = 4;
    b.bytes.resize(4 * DTypeSize(t));
    uint32_t p = PoisonPattern(t);
    for (size_t i = 0; i < b.bytes.size(); i += 4) std::memcpy(b.bytes.data() + i, &p, 4);
    for (size_t i = 0; i < 4; ++i) {
      EXPECT_TRUE(std::isnan(LoadElement(b.bytes.data(), t, i))) << DTypeName(t);
      EXPECT_TRUE(IsPoison(b, i, p));
    }
  }
}

TEST(Compare, FiguresAndTolerance) {
  HostBuffer ref = Filled(DType::kF32, {1.0, -2.0, 100.0, 0.0});
  HostBuffer out = Filled(DType::kF32, {1.0, -2.03, 100.5, std::nan("")});
  Tolerance tol{.atol = 1e-3, .rtol = 1e-2, .max_bad_ratio = 0};
  Figures f = CompareOutput(ref, out, PoisonPattern(DType::kF32), tol);
  EXPECT_EQ(f.nan_count, 1);
  EXPECT_NEAR(f.max_abs_err, 0.5, 1e-6);
  EXPECT_NEAR(f.max_rel_err, 0.015, 1e-4);
  EXPECT_EQ(f.over_1pct, 1);   // -2.03 vs -2: 1.5%
  EXPECT_EQ(f.out_of_tol, 2);  // -2.03 (0.03 > 0.021) and the NaN
  EXPECT_EQ(f.first_bad, 1);
  EXPECT_DOUBLE_EQ(f.bad_ratio(), 0.25);
}

TEST(Compare, ChecksumSeesOneFlippedBit) {
  std::vector<std::byte> a(4096, std::byte{1});
  uint64_t before = Checksum(a);
  a[4000] ^= std::byte{0x10};
  EXPECT_NE(before, Checksum(a));
}

}  // namespace
}  // namespace kf
