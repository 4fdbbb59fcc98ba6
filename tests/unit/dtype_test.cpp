#include "core/dtype.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

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

TEST(DType, ElementsLoadAndStore) {
  for (DType t : {DType::kF16, DType::kF32, DType::kF64, DType::kI32, DType::kI64, DType::kU8}) {
    std::vector<std::byte> buf(4 * DTypeSize(t));
    StoreElement(buf.data(), t, 2, 42.0);
    EXPECT_EQ(LoadElement(buf.data(), t, 2), 42.0) << DTypeName(t);
    EXPECT_EQ(ParseDType(DTypeName(t)), t);
  }
  EXPECT_FALSE(ParseDType("bf17").has_value());
}

}  // namespace
}  // namespace kf
