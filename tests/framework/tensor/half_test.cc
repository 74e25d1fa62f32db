#include "framework/tensor/half.h"

#include <immintrin.h>

#include <cmath>
#include <limits>
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

bool IsNanBFloat16(uint16_t bits) { return (bits & 0x7f80u) == 0x7f80u && (bits & 0x7fu) != 0; }

TEST(BFloat16Test, EveryBFloat16RoundTripsThroughFloat) {
  for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    if (IsNanBFloat16(static_cast<uint16_t>(bits))) continue;
    const float f = BFloat16ToFloat(BFloat16{static_cast<uint16_t>(bits)});
    ASSERT_EQ(FloatToBFloat16(f).bits, bits) << "bits " << bits;
  }
}

// CUDA's __float2bfloat16_rn rules, for every pair of adjacent bf16 values of either sign,
// subnormals (the float subnormals, which bf16 keeps: no flush to zero) included: the exact
// midpoint rounds to the even neighbour, the floats just below and above it to the nearer one,
// and every float strictly between a value and the midpoint to that value. A truncating
// conversion (round toward zero) or round-half-away fails the first or second check.
TEST(BFloat16Test, MidpointsRoundToEvenAndEverythingElseToNearest) {
  for (uint32_t sign : {0x0000u, 0x8000u}) {
    for (uint32_t bits = 0; bits < 0x7f7fu; ++bits) {
      const float lo = BFloat16ToFloat(BFloat16{static_cast<uint16_t>(sign | bits)});
      const float hi = BFloat16ToFloat(BFloat16{static_cast<uint16_t>(sign | (bits + 1))});
      // The midpoint is the float whose top 16 bits are lo's and the rest 0x8000.
      const float mid = BitsToFloat((FloatBits(lo) & 0xffff0000u) | 0x8000u);
      const uint32_t even = sign | ((bits & 1u) == 0 ? bits : bits + 1);
      ASSERT_EQ(FloatToBFloat16(mid).bits, even) << "bits " << bits;
      ASSERT_EQ(FloatToBFloat16(std::nextafter(mid, lo)).bits, sign | bits) << "bits " << bits;
      ASSERT_EQ(FloatToBFloat16(std::nextafter(mid, hi)).bits, sign | (bits + 1)) << "bits " << bits;
      ASSERT_EQ(FloatToBFloat16(std::nextafter(lo, hi)).bits, sign | bits) << "bits " << bits;
    }
  }
}

TEST(BFloat16Test, OverflowSubnormalsZerosInfinitiesAndNan) {
  // Largest finite bf16 0x7f7f = 3.3895e38; the floats above its midpoint with inf (up to
  // FLT_MAX) round to inf as CUDA's do, ties to even: the midpoint itself goes to 0x7f80.
  EXPECT_EQ(FloatToBFloat16(BitsToFloat(0x7f7f7fffu)).bits, 0x7f7fu);
  EXPECT_EQ(FloatToBFloat16(BitsToFloat(0x7f7f8000u)).bits, 0x7f80u);
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::max()).bits, 0x7f80u);
  EXPECT_EQ(FloatToBFloat16(-std::numeric_limits<float>::max()).bits, 0xff80u);
  EXPECT_EQ(FloatToBFloat16(INFINITY).bits, 0x7f80u);
  EXPECT_EQ(FloatToBFloat16(-INFINITY).bits, 0xff80u);
  // Subnormals: the smallest float subnormal 2^-149 rounds to 0 (below half of 2^-133), the
  // smallest bf16 subnormal 2^-133 is kept, and the largest float subnormal rounds up into the
  // smallest normal.
  EXPECT_EQ(FloatToBFloat16(std::ldexp(1.0f, -149)).bits, 0x0000u);
  EXPECT_EQ(FloatToBFloat16(std::ldexp(1.0f, -133)).bits, 0x0001u);
  EXPECT_EQ(FloatToBFloat16(std::ldexp(1.0f, -134)).bits, 0x0000u);     // tie -> even (zero)
  EXPECT_EQ(FloatToBFloat16(std::ldexp(3.0f, -134)).bits, 0x0002u);     // tie -> even (2)
  EXPECT_EQ(FloatToBFloat16(-std::ldexp(1.0f, -133)).bits, 0x8001u);
  EXPECT_EQ(FloatToBFloat16(BitsToFloat(0x007fffffu)).bits, 0x0080u);   // -> 2^-126
  EXPECT_EQ(FloatToBFloat16(0.0f).bits, 0x0000u);
  EXPECT_EQ(FloatToBFloat16(-0.0f).bits, 0x8000u);
  // Every NaN, quiet or signalling, of either sign, becomes CUDA's canonical NaN 0x7fff (a
  // signalling NaN with a low payload must not round into inf).
  for (uint32_t nan : {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fffffffu, 0x7f80ffffu}) {
    EXPECT_EQ(FloatToBFloat16(BitsToFloat(nan)).bits, 0x7fffu) << std::hex << nan;
  }
}

// CUDA's own host emulation of __float2bfloat16_rn (cuda_bf16.hpp, __internal_float2bfloat16
// plus its round-up rule), transcribed: an independent formulation of the same rules (it looks
// at the remainder, ours adds a bias), compared on random floats over the whole range. Every
// float, against the header itself: tests/gpu/bf16_rounding_test.cc.
uint16_t CudaHostFloatToBFloat16(float value) {
  const uint32_t x = FloatBits(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;
  const uint32_t remainder = x << 16;
  uint16_t r = static_cast<uint16_t>(x >> 16);
  if (remainder > 0x80000000u || (remainder == 0x80000000u && (r & 1u) != 0)) ++r;
  return r;
}

TEST(BFloat16Test, MatchesCudasHostEmulationOnRandomFloats) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 4000000; ++i) {
    uint32_t pattern = bits(rng);
    if (i % 4 == 0) pattern = (pattern & 0xffff0000u) | 0x8000u;  // exact ties
    ASSERT_EQ(FloatToBFloat16(BitsToFloat(pattern)).bits, CudaHostFloatToBFloat16(BitsToFloat(pattern)))
        << std::hex << pattern;
  }
}

}  // namespace
}  // namespace xlmr
