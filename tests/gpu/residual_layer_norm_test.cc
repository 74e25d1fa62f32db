// framework/ops/residual_layer_norm.h on CUDA (kernels/cuda/residual_layer_norm.h: dropout, add
// and LayerNorm in one kernel) against the CPU backend, which runs the ops the site is made of.
//
// Tolerances, and why:
// - sum (dropout(x) + residual): none, bit for bit. The mask is the same Philox words, the kept
//   value the same fp32 product rounded once to x's dtype, the sum one fp32 addition.
// - y, mean, rstd: ExpectClose 1e-5 (plus 1 ulp of a half output), layer_norm_test's bound for
//   the same reason: the kernel's statistics are fp32 sums in a warp's order, the CPU's double.
// - y_half: the same bound; it is y rounded once.
// - backward (d_sum, d_x = the dropout backward of d_sum in x's dtype, dgamma, dbeta +=): the
//   same bound, layer_norm_test's for LayerNorm's backward (fp32 row means in a warp's order);
//   a half d_x within 2 of its ulps at the largest magnitude (it is rounded twice).
// What a planted bug looks like: a mask word of the wrong element or block moves the sum by
// whole values (caught exactly); a wrong width or row offset in LayerNorm moves y at 1e-1.
// Skipped (with the reason) when no GPU is visible.
#include <algorithm>
#include <string>
#include <vector>

#include "framework/ops/residual_layer_norm.h"
#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using testing::ExpectBitEqual;
using testing::ExpectClose;
using testing::ExpectCloseToLargest;
using testing::OnGpu;
using testing::RandomTensor;

constexpr double kTolerance = 1e-5;
constexpr float kEps = 1e-5f;

class CudaResidualLayerNormTest : public testing::GpuTest {};

struct Case {
  Shape shape;     // [rows..., H]
  DType x_dtype;   // the projection's dtype (the matmul dtype)
  DType half;      // f32: no half copy
  float p;
};

std::string Name(const char* what, const Case& c) {
  return std::string(what) + " " + ShapeString(c.shape) + " x " + DTypeName(c.x_dtype) + " half " +
         DTypeName(c.half) + " p " + std::to_string(c.p);
}

void Compare(const Case& c, uint32_t seed) {
  const int64_t width = c.shape.back();
  const int64_t rows = width == 0 ? 0 : NumElements(c.shape) / width;
  const Tensor x = RandomTensor(c.shape, c.x_dtype, seed);
  const Tensor residual = RandomTensor(c.shape, DType::kF32, seed + 1, 2.0f, 3.0f);
  const Tensor gamma = RandomTensor({width}, DType::kF32, seed + 2, 0.5f, 1.0f);
  const Tensor beta = RandomTensor({width}, DType::kF32, seed + 3);
  // Rows at slots out of order, as a packed batch places them.
  Tensor slots = Tensor::Zeros({rows}, DType::kI32);
  for (int64_t r = 0; r < rows; ++r) slots.data<int32_t>()[r] = static_cast<int32_t>((r * 7 + 3) % (rows + 5));
  const DropoutKey key{0x0123456789abcdefull, 17, 3, 11, 2};
  const ops::ResidualLayerNormOutput cpu =
      ops::DropoutAddLayerNorm(x, residual, c.p, key, slots, rows + 5, gamma, beta, kEps, c.half);
  const ops::ResidualLayerNormOutput gpu = ops::DropoutAddLayerNorm(
      OnGpu(x), OnGpu(residual), c.p, key, OnGpu(slots), rows + 5, OnGpu(gamma), OnGpu(beta), kEps, c.half);
  ExpectBitEqual(Name("sum", c), gpu.sum, cpu.sum);
  ExpectClose(Name("y", c), gpu.y, cpu.y, kTolerance);
  ExpectClose(Name("mean", c), gpu.mean, cpu.mean, kTolerance);
  ExpectClose(Name("rstd", c), gpu.rstd, cpu.rstd, kTolerance);
  ASSERT_EQ(gpu.y_half.defined(), c.half != DType::kF32);
  if (gpu.y_half.defined()) ExpectClose(Name("y_half", c), gpu.y_half, cpu.y_half, kTolerance);

  // The backward from the CPU's saved values on both sides (the statistics as the CPU made them),
  // so that only the backward's own arithmetic differs.
  const Tensor dy = RandomTensor(c.shape, DType::kF32, seed + 5);
  Tensor cpu_dgamma = RandomTensor({width}, DType::kF32, seed + 6), cpu_dbeta = RandomTensor({width}, DType::kF32, seed + 7);
  Tensor gpu_dgamma = OnGpu(cpu_dgamma), gpu_dbeta = OnGpu(cpu_dbeta);
  const ops::ResidualLayerNormGrads cpu_grads = ops::DropoutAddLayerNormBackward(
      dy, cpu.sum, cpu.mean, cpu.rstd, gamma, c.p, key, slots, rows + 5, c.x_dtype, &cpu_dgamma, &cpu_dbeta);
  const ops::ResidualLayerNormGrads gpu_grads = ops::DropoutAddLayerNormBackward(
      OnGpu(dy), OnGpu(cpu.sum), OnGpu(cpu.mean), OnGpu(cpu.rstd), OnGpu(gamma), c.p, key, OnGpu(slots), rows + 5,
      c.x_dtype, &gpu_dgamma, &gpu_dbeta);
  ExpectClose(Name("d_sum", c), gpu_grads.d_sum, cpu_grads.d_sum, kTolerance);
  if (c.x_dtype == DType::kF32) {
    ExpectClose(Name("d_x", c), gpu_grads.d_x, cpu_grads.d_x, kTolerance);
  } else {
    // Rounded twice (the cast, then the kept value times the scale): a last-bit difference in
    // d_sum can become 2 ulps of the half dtype; 2 ulps at the largest magnitude.
    ExpectCloseToLargest(Name("d_x", c), gpu_grads.d_x, cpu_grads.d_x, c.x_dtype == DType::kF16 ? 2e-3 : 1.6e-2);
  }
  ExpectClose(Name("dgamma", c), gpu_dgamma, cpu_dgamma, kTolerance);
  ExpectClose(Name("dbeta", c), gpu_dbeta, cpu_dbeta, kTolerance);
}

// Widths of XLM-R base and large and of the tiny test models (fused: multiples of 4), one the
// kernel does not take (30: the composition on the GPU); rows not a multiple of the rows per
// block; no dropout, dropout, every dtype of the projection.
TEST_F(CudaResidualLayerNormTest, MatchesTheCpuComposition) {
  uint32_t seed = 1;
  for (const Shape& shape : {Shape{37, 768}, Shape{2, 5, 1024}, Shape{9, 16}, Shape{4, 128}, Shape{6, 30}}) {
    for (DType x_dtype : {DType::kF16, DType::kBF16, DType::kF32}) {
      for (float p : {0.0f, 0.1f}) {
        const DType half = x_dtype == DType::kF32 ? DType::kF32 : x_dtype;
        Compare({shape, x_dtype, half, p}, seed);
        seed += 8;
      }
    }
  }
}

TEST_F(CudaResidualLayerNormTest, NoRowsGivesEmptyOutputs) {
  Compare({Shape{0, 768}, DType::kF16, DType::kF16, 0.1f}, 99);
}

}  // namespace
}  // namespace xlmr
