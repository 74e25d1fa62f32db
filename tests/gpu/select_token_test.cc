// framework/ops/select_token.h on CUDA tensors (kernels/cuda/select_token.h) against the CPU
// backend.
//
// Tolerance: none, for every dtype: both directions are pure data movement, so the GPU's
// outputs (including the zeros the backward leaves at every other token) must equal the CPU's
// bit for bit.
// Skipped (with the reason) when no GPU is visible.
#include <string>
#include <vector>

#include "framework/ops/select_token.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using testing::ExpectBitEqual;
using testing::OnGpu;
using testing::RandomTensor;

class CudaSelectTokenTest : public testing::GpuTest {};

// [B, S, H]: one element, one token per sequence, H = 1000, three sequences, base-sized batch.
const std::vector<Shape>& Shapes() {
  static const std::vector<Shape> shapes = {{1, 1, 1}, {2, 1, 1000}, {3, 5, 768}, {8, 512, 768}};
  return shapes;
}

std::string Name(const char* op, DType dtype, const Shape& shape) {
  return std::string(op) + " " + DTypeName(dtype) + " x " + ShapeString(shape);
}

TEST_F(CudaSelectTokenTest, ForwardAndBackwardMatchCpuBitForBit) {
  uint32_t seed = 1;
  for (const Shape& shape : Shapes()) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      const Tensor x = RandomTensor(shape, dtype, seed++);
      ExpectBitEqual(Name("SelectFirstToken", dtype, shape), ops::SelectFirstToken(OnGpu(x)),
                     ops::SelectFirstToken(x));
      const Tensor dy = RandomTensor({shape[0], shape[2]}, dtype, seed++);
      ExpectBitEqual(Name("SelectFirstTokenBackward", dtype, shape),
                     ops::SelectFirstTokenBackward(OnGpu(dy), shape),
                     ops::SelectFirstTokenBackward(dy, shape));
    }
  }
}

TEST_F(CudaSelectTokenTest, EmptyBatchGivesEmptyResults) {
  const Tensor x = OnGpu(Tensor::Zeros({0, 4, 768}, DType::kF16));
  EXPECT_EQ(ops::SelectFirstToken(x).numel(), 0);
  const Tensor dy = OnGpu(Tensor::Zeros({0, 768}, DType::kF16));
  EXPECT_EQ(ops::SelectFirstTokenBackward(dy, {0, 4, 768}).numel(), 0);
}

}  // namespace
}  // namespace xlmr
