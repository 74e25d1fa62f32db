// The CPU's bf16 rounding (framework/tensor/half.h, FloatToBFloat16) against CUDA's own
// __float2bfloat16_rn from <cuda_bf16.h>, for every one of the 2^32 floats. Compiled as host
// code, the header's conversion is NVIDIA's emulation of the device instruction (cvt.rn.bf16.f32
// on sm_80+): round to nearest, ties to even, float subnormals kept, overflow to inf, every NaN
// the canonical 0x7fff. So this runs without a GPU (it needs only the toolkit's headers); on a
// GPU host tests/gpu/cast_test.cc compares the device conversion with the CPU's too.
#include <cuda_bf16.h>

#include <cstdint>
#include <cstring>

#include "framework/tensor/half.h"
#include "gtest/gtest.h"

namespace xlmr {
namespace {

uint16_t CudaBits(float value) {
  const __nv_bfloat16 rounded = __float2bfloat16_rn(value);
  uint16_t bits;
  std::memcpy(&bits, &rounded, sizeof bits);
  return bits;
}

TEST(Bf16RoundingTest, EveryFloatRoundsAsCudasFloat2Bfloat16Rn) {
  int64_t mismatches = 0;
  uint32_t first = 0;
  for (uint64_t pattern = 0; pattern <= 0xffffffffull; ++pattern) {
    const float value = BitsToFloat(static_cast<uint32_t>(pattern));
    if (FloatToBFloat16(value).bits != CudaBits(value) && mismatches++ == 0) {
      first = static_cast<uint32_t>(pattern);
    }
  }
  EXPECT_EQ(mismatches, 0) << "first mismatch: float bits 0x" << std::hex << first << ", cpu 0x"
                           << FloatToBFloat16(BitsToFloat(first)).bits << ", cuda 0x"
                           << CudaBits(BitsToFloat(first));
}

}  // namespace
}  // namespace xlmr
