// kernels/cuda/fused_attention_shared_memory.h: the kernels' shared-memory needs against the
// per-block limits of every GPU generation the binary runs on, and the choice of fused or eager
// attention that follows from a device's limit. (The kernels' real layouts are tied to these
// counts by static_asserts in kernels/cuda/fused_attention.cu.)
#include "kernels/cuda/fused_attention_shared_memory.h"

#include "framework/tensor/dtype.h"
#include "gtest/gtest.h"

namespace xlmr::kernels::cuda {
namespace {

// Fused attention must stay available on every GPU the binary supports: a layout that grows
// past the smallest opt-in limit (99 KiB on sm_86, sm_89 and sm_120) fails here, before a user
// with such a card silently loses the fused kernels.
TEST(FusedAttentionSharedMemoryTest, EveryKernelFitsEverySupportedGpu) {
  for (const SharedMemoryLimit& limit : kSharedMemoryOptInLimits) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      EXPECT_TRUE(FusedAttentionFitsSharedMemory(dtype, limit.optin_bytes))
          << DTypeName(dtype) << " needs " << FusedAttentionSharedBytes(dtype) << " bytes; sm_"
          << limit.major << limit.minor << " allows " << limit.optin_bytes;
    }
  }
}

// The counts of the header's layouts, worked out by hand: f32 tiles of 64 x 65 floats (16,640
// bytes), accumulators of 64 x 64 floats (16,384), rows of 64 floats (256), keep masks of 64
// words (512); f16 and bf16 tiles of 64 x 72 16-bit elements (9,216).
TEST(FusedAttentionSharedMemoryTest, LayoutsAddUpAsDescribed) {
  EXPECT_EQ(kF32ForwardSharedBytes, 3u * 16640 + 16384 + 3 * 256 + 512);   // 67,584
  EXPECT_EQ(kF32DqSharedBytes, 4u * 16640 + 16384 + 256 + 512);            // 83,712
  EXPECT_EQ(kF32KeyTileSharedBytes, 4u * 16640 + 2 * 16384 + 3 * 256 + 512);  // 100,608
  EXPECT_EQ(kF16KeyTileSharedBytes, 6u * 9216 + 4 * 256 + 512);            // 56,832
  EXPECT_EQ(FusedAttentionSharedBytes(DType::kF32), kF32KeyTileSharedBytes);
  EXPECT_EQ(FusedAttentionSharedBytes(DType::kF16), kF16KeyTileSharedBytes);
  EXPECT_EQ(FusedAttentionSharedBytes(DType::kBF16), kF16KeyTileSharedBytes);  // one template
  EXPECT_EQ(FusedAttentionSharedBytes(DType::kI32), 0u);
}

// A device one byte short of a dtype's largest kernel gets eager attention for that dtype only;
// a dtype without fused CUDA kernels (i32) never fits.
TEST(FusedAttentionSharedMemoryTest, TooLittleSharedMemoryMeansEagerAttention) {
  const size_t f32_need = FusedAttentionSharedBytes(DType::kF32);
  EXPECT_TRUE(FusedAttentionFitsSharedMemory(DType::kF32, f32_need));
  EXPECT_FALSE(FusedAttentionFitsSharedMemory(DType::kF32, f32_need - 1));
  EXPECT_TRUE(FusedAttentionFitsSharedMemory(DType::kF16, f32_need - 1));
  EXPECT_FALSE(FusedAttentionFitsSharedMemory(DType::kF16, FusedAttentionSharedBytes(DType::kF16) - 1));
  EXPECT_FALSE(FusedAttentionFitsSharedMemory(DType::kBF16, FusedAttentionSharedBytes(DType::kBF16) - 1));
  EXPECT_FALSE(FusedAttentionFitsSharedMemory(DType::kI32, 1u << 30));
}

}  // namespace
}  // namespace xlmr::kernels::cuda
