// ops::RobertaPositionIds on CUDA tensors (kernels/cuda/position_ids.h) against the CPU backend.
//
// Tolerance: none: integer counting, so the GPU's ids must equal the CPU's bit for bit. Shapes
// cover a partial last ballot (S not a multiple of 32), rows of only padding, padding before and
// between real tokens (left padding, packed text), one row and a production batch (64 x 512),
// and more rows than one block's 8 warps.
// Skipped (with the reason) when no GPU is visible.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "framework/ops/position_ids.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using testing::ExpectBitEqual;
using testing::OnGpu;

class CudaPositionIdsTest : public testing::GpuTest {};

constexpr int32_t kPad = 1;

// Ids in [0, 50) where about `pad_fraction` of the tokens are the pad id, anywhere in the row.
Tensor IdsWithPadding(const Shape& shape, double pad_fraction, uint32_t seed) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution pad(pad_fraction);
  std::uniform_int_distribution<int32_t> token(2, 49);
  Tensor ids = Tensor::Zeros(shape, DType::kI32);
  int32_t* data = ids.data<int32_t>();
  for (int64_t i = 0; i < ids.numel(); ++i) data[i] = pad(rng) ? kPad : token(rng);
  return ids;
}

TEST_F(CudaPositionIdsTest, MatchesCpuBitForBit) {
  const std::vector<Shape> shapes = {{1, 1}, {1, 31}, {3, 33}, {17, 64}, {9, 100}, {64, 512}};
  uint32_t seed = 11;
  for (const Shape& shape : shapes) {
    for (double pad_fraction : {0.0, 0.3, 1.0}) {
      const Tensor ids = IdsWithPadding(shape, pad_fraction, ++seed);
      const Tensor cpu = ops::RobertaPositionIds(ids, kPad);
      const Tensor gpu = ops::RobertaPositionIds(OnGpu(ids), kPad);
      ASSERT_EQ(gpu.device(), Device::kCuda);
      ExpectBitEqual("position ids " + ShapeString(shape) + " pad fraction " +
                         std::to_string(pad_fraction),
                     gpu, cpu);
    }
  }
}

TEST_F(CudaPositionIdsTest, EmptyBatchGivesAnEmptyTensor) {
  const Tensor gpu = ops::RobertaPositionIds(OnGpu(Tensor::Zeros({0, 8}, DType::kI32)), kPad);
  EXPECT_EQ(gpu.shape(), Shape({0, 8}));
}

}  // namespace
}  // namespace xlmr
