#include "core/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace kf {
namespace {

TEST(DType, HalfRoundTripsEveryPattern) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(f)))) << h;
    } else {
      EXPECT_EQ(FloatToHalf(f), h) << "pattern " << h << " value " << f;
    }
  }
}

TEST(DType, HalfRoundsToNearestEven) {
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f)), 1.0f);
  EXPECT_EQ(HalfToFloat(FloatToHalf(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(HalfToFloat(FloatToHalf(65520.0f))));  // rounds up past the largest half
  EXPECT_EQ(HalfToFloat(FloatToHalf(65519.0f)), 65504.0f);
  // 1 + 2^-11 is halfway between 1 and the next half: ties go to the even mantissa (1.0).
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + std::ldexp(1.0f, -11))), 1.0f);
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11))),
            1.0f + std::ldexp(1.0f, -9));
  // Smallest subnormal and below.
  EXPECT_EQ(HalfToFloat(FloatToHalf(std::ldexp(1.0f, -24))), std::ldexp(1.0f, -24));
  EXPECT_EQ(HalfToFloat(FloatToHalf(std::ldexp(1.0f, -26))), 0.0f);
  EXPECT_NEAR(HalfToFloat(FloatToHalf(1.0f / 3)), 1.0f / 3, 1e-4);
}

float FromBits(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

TEST(DType, BFloat16RoundTripsEveryPattern) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    float f = BFloat16ToFloat(static_cast<uint16_t>(b));
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    EXPECT_EQ(bits, b << 16);  // bfloat16 is the top half of a float
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(f)))) << b;
    } else {
      EXPECT_EQ(FloatToBFloat16(f), b) << "pattern " << b << " value " << f;
    }
  }
}

TEST(DType, BFloat16RoundsToNearestEven) {
  auto round = [](float f) { return BFloat16ToFloat(FloatToBFloat16(f)); };
  const float ulp = std::ldexp(1.0f, -7);                // of 1.0: 7 mantissa bits
  EXPECT_EQ(round(1.0f + ulp / 2), 1.0f);                // a tie: to the even mantissa (1.0)
  EXPECT_EQ(round(1.0f + 3 * ulp / 2), 1.0f + 2 * ulp);  // a tie: 1 + 2 ulp is the even one
  EXPECT_EQ(round(1.0f + ulp / 2 + std::ldexp(1.0f, -20)), 1.0f + ulp);  // past the tie: up
  EXPECT_EQ(round(1.0f + ulp / 2 - std::ldexp(1.0f, -20)), 1.0f);        // short of it: down
  EXPECT_EQ(round(-1.0f - 3 * ulp / 2), -1.0f - 2 * ulp);
  // Overflow: the largest bfloat16 is (2 - 2^-7) 2^127; the tie above it goes to infinity (odd
  // mantissa), anything short of the tie stays, and FLT_MAX is past it.
  const float largest = std::ldexp(2.0f - ulp, 127);
  EXPECT_EQ(round(largest), largest);
  EXPECT_EQ(round(std::ldexp(2.0f - ulp / 2, 127)), std::numeric_limits<float>::infinity());
  EXPECT_EQ(round(std::ldexp(2.0f - ulp + ulp / 4, 127)), largest);
  EXPECT_EQ(round(-std::numeric_limits<float>::max()), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(round(std::numeric_limits<float>::infinity()), std::numeric_limits<float>::infinity());
  // NaN stays NaN, the signalling one whose payload sits in the dropped bits included (rounding
  // its bits as a number would give infinity).
  EXPECT_TRUE(std::isnan(round(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(round(FromBits(0x7f800001u))));
  EXPECT_TRUE(std::isnan(round(FromBits(0xffffffffu))));
  // Subnormals: the smallest bfloat16 is 2^-133; half of it is a tie to zero, 1.5 of it a tie to
  // 2^-132 (the even one), and a float subnormal rounds like any other value.
  EXPECT_EQ(round(std::ldexp(1.0f, -133)), std::ldexp(1.0f, -133));
  EXPECT_EQ(round(std::ldexp(1.0f, -134)), 0.0f);
  EXPECT_EQ(round(std::ldexp(3.0f, -134)), std::ldexp(1.0f, -132));
  EXPECT_EQ(round(std::ldexp(1.0f, -134) + std::ldexp(1.0f, -140)), std::ldexp(1.0f, -133));
  EXPECT_EQ(round(std::ldexp(1.0f, -149)), 0.0f);
}

// Against a reference computed here in doubles: the nearest of the two bfloat16 values around
// every float drawn (the truncation and the next one up in magnitude), ties to the even one.
TEST(DType, BFloat16IsTheNearestOfItsNeighbours) {
  std::mt19937 rng(5);
  for (int n = 0; n < 200000; ++n) {
    const uint32_t x = static_cast<uint32_t>(rng());
    const float f = FromBits(x);
    if (!std::isfinite(f)) continue;
    const uint32_t below = x & 0xffff0000u, above = below + 0x10000u;
    const double lo = FromBits(below), hi = FromBits(above);  // hi may be infinity: then lo wins
    const double d_lo = std::fabs(f - lo), d_hi = std::isinf(hi) ? 0 : std::fabs(hi - f);
    uint32_t want;
    if (std::isinf(hi)) {
      // Past the largest finite value the rounding boundary is where the next value would sit.
      const double boundary = lo + (lo - static_cast<double>(FromBits(below - 0x10000u))) / 2;
      want = std::fabs(f) > std::fabs(boundary) ||
                     (std::fabs(f) == std::fabs(boundary) && (below >> 16 & 1u))
                 ? above
                 : below;
    } else if (d_lo != d_hi) {
      want = d_lo < d_hi ? below : above;
    } else {
      want = (below >> 16 & 1u) ? above : below;
    }
    ASSERT_EQ(FloatToBFloat16(f), want >> 16) << "float bits " << std::hex << x;
  }
}

TEST(DType, ElementsLoadAndStore) {
  for (DType t : {DType::kF16, DType::kBF16, DType::kF32, DType::kF64, DType::kI32, DType::kI64,
                  DType::kU8}) {
    std::vector<std::byte> buf(4 * DTypeSize(t));
    StoreElement(buf.data(), t, 2, 42.0);
    EXPECT_EQ(LoadElement(buf.data(), t, 2), 42.0) << DTypeName(t);
    EXPECT_EQ(ParseDType(DTypeName(t)), t);
  }
  EXPECT_FALSE(ParseDType("bf17").has_value());
  EXPECT_EQ(ParseDType("bfloat16"), DType::kBF16);
  EXPECT_EQ(DTypeSize(DType::kBF16), 2u);
  EXPECT_TRUE(IsFloat(DType::kBF16));
  // A value bf16 holds only after rounding: 1 + 2^-8 + 2^-9 rounds up to 1 + 2^-7.
  std::vector<std::byte> buf(2);
  StoreElement(buf.data(), DType::kBF16, 0, 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -9));
  EXPECT_EQ(LoadElement(buf.data(), DType::kBF16, 0), 1.0 + std::ldexp(1.0, -7));
}

}  // namespace
}  // namespace kf
