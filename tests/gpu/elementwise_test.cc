// framework/ops/elementwise.h on CUDA tensors (kernels/cuda/elementwise.h) against the CPU
// backend.
//
// Tolerance: none, for every dtype. Add is one IEEE fp32 addition of exactly widened inputs and
// one round-to-nearest-even to the output dtype on both backends; a cast is one rounding. So
// every output must match the CPU bit for bit.
// Skipped (with the reason) when no GPU is visible.
#include <string>
#include <vector>

#include "framework/ops/elementwise.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using testing::ExpectBitEqual;
using testing::OnGpu;
using testing::RandomTensor;

class CudaElementwiseTest : public testing::GpuTest {};

// Realistic ([tokens, 768]) and awkward shapes: one element, one row, a width (1000) that no
// block size divides, three rows, and more elements than one resident grid covers (so the
// grid-stride loop runs several rounds).
const std::vector<Shape>& Shapes() {
  static const std::vector<Shape> shapes = {{1}, {1, 768}, {3, 1000}, {2, 7, 768}, {5, 1000, 700}};
  return shapes;
}

std::string Name(const char* op, DType a, DType b, DType out, const Shape& shape) {
  return std::string(op) + "(" + DTypeName(a) + ", " + DTypeName(b) + ") -> " + DTypeName(out) +
         " " + ShapeString(shape);
}

TEST_F(CudaElementwiseTest, AddMatchesCpuBitForBitForEveryDTypeMix) {
  uint32_t seed = 1;
  for (const Shape& shape : Shapes()) {
    for (DType a_dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (DType b_dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
        // Scales 1 and 3e4: the f16 sums then also overflow to inf, which must match too.
        const Tensor a = RandomTensor(shape, a_dtype, seed++, 3e4f);
        const Tensor b = RandomTensor(shape, b_dtype, seed++);
        for (DType out : {DType::kF32, DType::kF16, DType::kBF16}) {
          ExpectBitEqual(Name("Add", a_dtype, b_dtype, out, shape),
                         ops::Add(OnGpu(a), OnGpu(b), out), ops::Add(a, b, out));
        }
      }
    }
  }
}

TEST_F(CudaElementwiseTest, CastMatchesCpuBitForBit) {
  uint32_t seed = 100;
  for (const Shape& shape : Shapes()) {
    for (DType from : {DType::kF32, DType::kF16, DType::kBF16}) {
      const Tensor x = RandomTensor(shape, from, seed++, 2e4f);
      for (DType to : {DType::kF32, DType::kF16, DType::kBF16}) {
        const Tensor gpu = ops::Cast(OnGpu(x), to);
        EXPECT_EQ(gpu.device(), Device::kCuda);
        ExpectBitEqual(Name("Cast", from, from, to, shape), gpu, ops::Cast(x, to));
      }
    }
  }
}

TEST_F(CudaElementwiseTest, CastIntoWritesOnlyTheDestinationView) {
  // The fp16 weight refresh writes views of one flat buffer, at offsets that need not be aligned.
  const Tensor master = RandomTensor({3, 1000}, DType::kF32, 7);
  const Tensor buffer_cpu = RandomTensor({3011}, DType::kF16, 8);
  Tensor buffer_gpu = OnGpu(buffer_cpu);
  Tensor expected = RandomTensor({3011}, DType::kF16, 8);  // the same values, another buffer
  Tensor expected_view = expected.View(5, {3, 1000});
  ops::CastInto(master, &expected_view);
  Tensor gpu_view = buffer_gpu.View(5, {3, 1000});
  ops::CastInto(OnGpu(master), &gpu_view);
  ExpectBitEqual("CastInto f32 -> f16 view at offset 5 of [3011]", buffer_gpu, expected);
}

TEST_F(CudaElementwiseTest, EmptyTensorsGiveEmptyResults) {
  const Tensor empty = OnGpu(Tensor::Zeros({0, 768}, DType::kF16));
  EXPECT_EQ(ops::Add(empty, empty, DType::kF32).numel(), 0);
  EXPECT_EQ(ops::Cast(empty, DType::kF32).numel(), 0);
}

}  // namespace
}  // namespace xlmr
