#include "framework/tensor/tensor.h"

#include <vector>

#include "gtest/gtest.h"

namespace xlmr {
namespace {

TEST(TensorTest, ViewsShareStorageAndStayInBounds) {
  Tensor flat = Tensor::Zeros({10}, DType::kF32, Device::kCpu, MemoryCategory::kWeights);
  Tensor matrix = flat.View(4, {2, 3});
  matrix.data<float>()[0] = 5.0f;
  EXPECT_EQ(flat.data<float>()[4], 5.0f);
  EXPECT_EQ(matrix.Slice(1, 2).data<float>() - flat.data<float>(), 7);
  EXPECT_DEATH(flat.View(8, {3}), "outside");
}

TEST(TensorTest, HalfStorageRoundsLikeTheGpu) {
  Tensor t = Tensor::Zeros({3}, DType::kF16);
  t.CopyFromFloats({1.0f / 3.0f, 70000.0f, 1e-8f});
  std::vector<float> back = t.ToFloatVector();
  EXPECT_EQ(back[0], 0.333251953125f);  // nearest half to 1/3
  EXPECT_TRUE(std::isinf(back[1]));     // overflow, as fp16 on a GPU
  EXPECT_EQ(back[2], 0.0f);             // below the smallest subnormal
}

TEST(TensorTest, AccountingCountsCurrentAndPeakPerCategory) {
  MemoryStats& stats = MemoryStatsFor(Device::kCpu);
  stats.ResetPeaks();
  const int64_t before = stats.Of(MemoryCategory::kActivations).current;
  {
    Tensor a = Tensor::Zeros({256}, DType::kF32);  // 1 KiB of activations
    Tensor b = Tensor::Zeros({128}, DType::kF16);  // 256 B
    EXPECT_EQ(stats.Of(MemoryCategory::kActivations).current, before + 1024 + 256);
    Tensor view = a.View(0, {16});  // a view allocates nothing
    EXPECT_EQ(stats.Of(MemoryCategory::kActivations).current, before + 1024 + 256);
  }
  EXPECT_EQ(stats.Of(MemoryCategory::kActivations).current, before);
  EXPECT_EQ(stats.Of(MemoryCategory::kActivations).peak, before + 1024 + 256);
  stats.ResetPeaks();
  EXPECT_EQ(stats.Of(MemoryCategory::kActivations).peak, before);
}

TEST(TensorTest, EmptyHasTheShapeDtypeAndAccountingOfZeros) {
  MemoryStats& stats = MemoryStatsFor(Device::kCpu);
  stats.ResetPeaks();
  const int64_t workspace_before = stats.Of(MemoryCategory::kWorkspace).current;
  const int64_t activations_before = stats.Of(MemoryCategory::kActivations).current;
  {
    Tensor t = Tensor::Empty({2, 3, 4}, DType::kF16, Device::kCpu, MemoryCategory::kWorkspace);
    EXPECT_TRUE(t.defined());
    EXPECT_EQ(t.shape(), Shape({2, 3, 4}));
    EXPECT_EQ(t.dtype(), DType::kF16);
    EXPECT_EQ(t.device(), Device::kCpu);
    EXPECT_EQ(t.bytes(), 48u);
    EXPECT_EQ(t.byte_offset(), 0u);
    EXPECT_EQ(t.storage()->bytes(), 48u);
    EXPECT_EQ(t.storage()->category(), MemoryCategory::kWorkspace);
    // Counted under its own category only, exactly as Zeros counts the same request.
    EXPECT_EQ(stats.Of(MemoryCategory::kWorkspace).current, workspace_before + 48);
    EXPECT_EQ(stats.Of(MemoryCategory::kActivations).current, activations_before);
    Tensor zeros = Tensor::Zeros({2, 3, 4}, DType::kF16, Device::kCpu, MemoryCategory::kWorkspace);
    EXPECT_EQ(stats.Of(MemoryCategory::kWorkspace).current, workspace_before + 2 * 48);
  }
  EXPECT_EQ(stats.Of(MemoryCategory::kWorkspace).current, workspace_before);
  EXPECT_EQ(stats.Of(MemoryCategory::kWorkspace).peak, workspace_before + 2 * 48);
}

TEST(TensorTest, EmptyHoldsWhatIsWrittenIntoIt) {
  Tensor t = Tensor::Empty({4}, DType::kF32, Device::kCpu, MemoryCategory::kActivations);
  t.CopyFromFloats({1.0f, -2.0f, 0.5f, 3.0f});
  EXPECT_EQ(t.ToFloatVector(), std::vector<float>({1.0f, -2.0f, 0.5f, 3.0f}));
}

TEST(TensorTest, EmptyOfNoElementsAndNegativeDimensions) {
  Tensor none = Tensor::Empty({0, 8}, DType::kI32, Device::kCpu, MemoryCategory::kActivations);
  EXPECT_TRUE(none.defined());
  EXPECT_EQ(none.numel(), 0);
  EXPECT_EQ(none.bytes(), 0u);
  EXPECT_DEATH(Tensor::Empty({2, -1}, DType::kF32, Device::kCpu, MemoryCategory::kActivations),
               "negative dimension");
}

}  // namespace
}  // namespace xlmr
