// framework/ops/activations.h on CUDA tensors (kernels/cuda/activations.h) against the CPU
// backend.
//
// Tolerances (ExpectClose: |gpu - cpu| <= tol * max(|cpu|, 1), plus 1 f16 ulp for f16 outputs):
//   dtype | Gelu, GeluBackward, Tanh, TanhBackward
//   f32   | 2e-6
//   f16   | 2e-6 + 1 ulp (the fp32 values differ as in f32, then round once to f16)
// TanhBackward is three IEEE fp32 operations in the same order on both backends and normally
// matches exactly; the tolerance only allows for a CPU build that contracts 1 - y * y into a
// fused multiply-add (e.g. compiled with -march=native). Why the others are not exact: both
// backends do the same fp32 operations in the same order without fused multiply-adds, but
// erf/exp/tanh come from different libraries: CUDA's erff, expf and tanhf are
// within 2 ulp, glibc's within 1, so the fp32 results may differ by ~3 ulp (~4e-7) of values up
// to ~1, times |dy| (up to ~5 for N(0,1) gradients) in the backward passes.
// Skipped (with the reason) when no GPU is visible.
#include <string>
#include <vector>

#include "framework/ops/activations.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using testing::ExpectClose;
using testing::OnGpu;
using testing::RandomTensor;

constexpr double kTolerance = 2e-6;

class CudaActivationsTest : public testing::GpuTest {};

// Realistic ([tokens, 3072] is the FFN width) and awkward shapes; inputs N(0, 3^2) reach the
// tails where GELU's erf term cancels and tanh saturates.
const std::vector<Shape>& Shapes() {
  static const std::vector<Shape> shapes = {{1}, {1, 768}, {3, 1000}, {2, 9, 3072}};
  return shapes;
}

std::string Name(const char* op, DType dtype, const Shape& shape) {
  return std::string(op) + " " + DTypeName(dtype) + " " + ShapeString(shape);
}

TEST_F(CudaActivationsTest, GeluAndItsBackwardMatchCpu) {
  uint32_t seed = 1;
  for (const Shape& shape : Shapes()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      const Tensor x = RandomTensor(shape, dtype, seed++, 3.0f);
      const Tensor dy = RandomTensor(shape, dtype, seed++);
      ExpectClose(Name("Gelu", dtype, shape), ops::Gelu(OnGpu(x)), ops::Gelu(x), kTolerance);
      ExpectClose(Name("GeluBackward", dtype, shape), ops::GeluBackward(OnGpu(dy), OnGpu(x)),
                  ops::GeluBackward(dy, x), kTolerance);
    }
  }
}

TEST_F(CudaActivationsTest, TanhAndItsBackwardMatchCpu) {
  uint32_t seed = 100;
  for (const Shape& shape : Shapes()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      const Tensor x = RandomTensor(shape, dtype, seed++, 3.0f);
      const Tensor dy = RandomTensor(shape, dtype, seed++);
      const Tensor y = ops::Tanh(x);
      ExpectClose(Name("Tanh", dtype, shape), ops::Tanh(OnGpu(x)), y, kTolerance);
      // The backward from the same (CPU) y on both sides, so only the backward is compared.
      ExpectClose(Name("TanhBackward", dtype, shape), ops::TanhBackward(OnGpu(dy), OnGpu(y)),
                  ops::TanhBackward(dy, y), kTolerance);
    }
  }
}

// Whole tensors of 4k elements take the four-wide kernels (float_access.cuh's Load4/Store4); a
// view one element into its buffer is not aligned for them and takes the element-wise ones: both
// must give the CPU's values, in every dtype.
TEST_F(CudaActivationsTest, MisalignedViewsTakeTheElementwisePathWithTheSameResults) {
  uint32_t seed = 200;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    const Tensor x = RandomTensor({1 + 768}, dtype, seed++, 3.0f);
    const Tensor dy = RandomTensor({1 + 768}, dtype, seed++);
    const Tensor x_view = OnGpu(x).View(1, {768});
    const Tensor dy_view = OnGpu(dy).View(1, {768});
    const Tensor x_cpu = x.View(1, {768}), dy_cpu = dy.View(1, {768});
    ExpectClose(Name("Gelu view", dtype, {768}), ops::Gelu(x_view), ops::Gelu(x_cpu), kTolerance);
    ExpectClose(Name("GeluBackward view", dtype, {768}), ops::GeluBackward(dy_view, x_view),
                ops::GeluBackward(dy_cpu, x_cpu), kTolerance);
  }
}

TEST_F(CudaActivationsTest, EmptyTensorsGiveEmptyResults) {
  // No rows (an empty batch): the kernels must not launch an empty grid (a launch error).
  const Tensor empty = OnGpu(Tensor::Zeros({0, 768}, DType::kF16));
  for (const Tensor& out : {ops::Gelu(empty), ops::GeluBackward(empty, empty), ops::Tanh(empty),
                            ops::TanhBackward(empty, empty)}) {
    EXPECT_EQ(out.shape(), empty.shape());
    EXPECT_EQ(out.dtype(), DType::kF16);
  }
}

TEST_F(CudaActivationsTest, MixedDTypeGradientTakesTheSavedTensorsDType) {
  const Tensor x = RandomTensor({3, 1000}, DType::kF16, 5, 3.0f);
  const Tensor dy = RandomTensor({3, 1000}, DType::kF32, 6);
  const Tensor gpu = ops::GeluBackward(OnGpu(dy), OnGpu(x));
  EXPECT_EQ(gpu.dtype(), DType::kF16);
  ExpectClose("GeluBackward(f32 dy, f16 x)", gpu, ops::GeluBackward(dy, x), kTolerance);
}

}  // namespace
}  // namespace xlmr
