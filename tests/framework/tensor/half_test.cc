#include "framework/tensor/half.h"

#include <immintrin.h>

#include <cmath>
#include <random>

#include "gtest/gtest.h"

namespace xlmr {
namespace {

bool IsNanHalf(uint16_t bits) { return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0; }

TEST(HalfTest, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    if (IsNanHalf(static_cast<uint16_t>(bits))) continue;
    const float f = HalfToFloat(Half{static_cast<uint16_t>(bits)});
    EXPECT_EQ(FloatToHalf(f).bits, bits) << "bits " << bits;
  }
}

TEST(HalfTest, MidpointsBetweenNeighboursRoundToEven) {
  // For each pair of adjacent positive finite halves, the exact midpoint (representable in
  // float) must round to the one with an even mantissa; just above/below it to the nearer.
  for (uint32_t bits = 0; bits < 0x7bffu; ++bits) {
    const float lo = HalfToFloat(Half{static_cast<uint16_t>(bits)});
    const float hi = HalfToFloat(Half{static_cast<uint16_t>(bits + 1)});
    const float mid = lo + (hi - lo) / 2;
    const uint32_t even = (bits & 1u) == 0 ? bits : bits + 1;
    ASSERT_EQ(FloatToHalf(mid).bits, even) << "bits " << bits;
    ASSERT_EQ(FloatToHalf(std::nextafter(mid, 0.0f)).bits, bits);
    ASSERT_EQ(FloatToHalf(std::nextafter(mid, hi)).bits, bits + 1);
  }
}

TEST(HalfTest, OverflowUnderflowAndSpecials) {
  EXPECT_EQ(FloatToHalf(65504.0f).bits, 0x7bffu);
  EXPECT_EQ(FloatToHalf(65519.99f).bits, 0x7bffu);  // below the halfway point to 2^16
  EXPECT_EQ(FloatToHalf(65520.0f).bits, 0x7c00u);   // ties to even = infinity
  EXPECT_EQ(FloatToHalf(-1e9f).bits, 0xfc00u);
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -24)).bits, 0x0001u);  // smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)).bits, 0x0000u);  // tie -> even (zero)
  EXPECT_EQ(FloatToHalf(std::ldexp(1.5f, -25)).bits, 0x0001u);
  EXPECT_EQ(FloatToHalf(-0.0f).bits, 0x8000u);
  EXPECT_TRUE(IsNanHalf(FloatToHalf(NAN).bits));
  EXPECT_EQ(FloatToHalf(INFINITY).bits, 0x7c00u);
}

// The x86 F16C instruction implements IEEE round-to-nearest-even conversion in hardware, an
// independent oracle for random floats across the whole range.
__attribute__((target("f16c"))) uint16_t HardwareFloatToHalf(float value) {
  return static_cast<uint16_t>(_cvtss_sh(value, _MM_FROUND_TO_NEAREST_INT));
}

TEST(HalfTest, MatchesHardwareConversionOnRandomFloats) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "CPU has no F16C";
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 2000000; ++i) {
    const float f = BitsToFloat(bits(rng));
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalf(f).bits, HardwareFloatToHalf(f)) << f;
  }
}

TEST(BFloat16Test, RoundsToNearestEven) {
  EXPECT_EQ(FloatToBFloat16(1.0f).bits, 0x3f80u);
  // 1 + 2^-8 is exactly halfway between 1 and 1 + 2^-7: ties to even (1.0).
  EXPECT_EQ(FloatToBFloat16(1.0f + std::ldexp(1.0f, -8)).bits, 0x3f80u);
  EXPECT_EQ(FloatToBFloat16(1.0f + 3 * std::ldexp(1.0f, -8)).bits, 0x3f82u);
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(-2.5f)), -2.5f);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(NAN))));
}

}  // namespace
}  // namespace xlmr
