// framework/ops/layer_norm.h on CUDA tensors (kernels/cuda/layer_norm.h) against the CPU backend.
//
// Tolerances (ExpectClose: |gpu - cpu| <= tol * max(|cpu|, 1), plus 1 f16 ulp for f16 outputs):
//   output                  | f32 and f16 inputs
//   y, mean, rstd, dx       | 1e-5 (+ 1 ulp where the output is f16)
//   dgamma, dbeta (+=)      | 1e-5
// Why not exact: the GPU reduces in fp32 over a warp (and, for dgamma/dbeta, over fixed chunks
// of rows), the CPU sums in double; the statistics then differ by a few fp32 ulp, which the
// normalisation carries into every output. 1e-5 is ~100 fp32 ulp: far above that, far below any
// indexing or formula error (which shows up at the 1e-2 level or more).
// The GPU backward must also be deterministic: repeated runs give identical bits.
// Skipped (with the reason) when no GPU is visible.
#include <string>
#include <vector>

#include "framework/ops/layer_norm.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using testing::ExpectBitEqual;
using testing::ExpectClose;
using testing::OnGpu;
using testing::RandomTensor;

constexpr double kTolerance = 1e-5;
constexpr float kEps = 1e-5f;

class CudaLayerNormTest : public testing::GpuTest {};

// One element (H = 1: zero variance), one row, three rows, H = 768 and 1024 (base and large),
// H = 1000 (no multiple of the warp), 37 rows (not a multiple of the rows per block), and 300
// rows (three chunks of the parameter-gradient reduction, the last one partial), and no rows
// at all (nothing may be launched: an empty grid is a launch error; gradients stay as they were).
const std::vector<Shape>& Shapes() {
  static const std::vector<Shape> shapes = {{1},        {1, 768},  {3, 1000},     {2, 4, 768},
                                            {37, 1024}, {300, 64}, {3, 100, 1000}, {0, 768}};
  return shapes;
}

struct Case {
  DType x_dtype;    // x and dy
  DType out_dtype;  // y
};

std::string Name(const char* what, const Case& c, const Shape& shape) {
  return std::string(what) + " (x " + DTypeName(c.x_dtype) + ", y " + DTypeName(c.out_dtype) +
         ") " + ShapeString(shape);
}

// Forward and backward of one case on both backends, every output compared.
void CompareForwardAndBackward(const Case& c, const Shape& shape, uint32_t seed) {
  const int64_t width = shape.back();
  // A mean of 3 and a standard deviation of 2: the variance must not cancel against the mean.
  const Tensor x = RandomTensor(shape, c.x_dtype, seed, 2.0f, 3.0f);
  const Tensor dy = RandomTensor(shape, c.x_dtype, seed + 1);
  const Tensor gamma = RandomTensor({width}, DType::kF32, seed + 2, 0.5f, 1.0f);
  const Tensor beta = RandomTensor({width}, DType::kF32, seed + 3, 0.5f);
  const ops::LayerNormOutput cpu = ops::LayerNorm(x, gamma, beta, kEps, c.out_dtype);
  const ops::LayerNormOutput gpu =
      ops::LayerNorm(OnGpu(x), OnGpu(gamma), OnGpu(beta), kEps, c.out_dtype);
  ExpectClose(Name("y", c, shape), gpu.y, cpu.y, kTolerance);
  ExpectClose(Name("mean", c, shape), gpu.mean, cpu.mean, kTolerance);
  ExpectClose(Name("rstd", c, shape), gpu.rstd, cpu.rstd, kTolerance);

  // Non-zero starting gradients: the parameter gradients accumulate (+=). Both backwards use
  // the CPU's statistics, so the backward is compared on its own.
  Tensor dgamma_cpu = RandomTensor({width}, DType::kF32, seed + 4);
  Tensor dbeta_cpu = RandomTensor({width}, DType::kF32, seed + 5);
  Tensor dgamma_gpu = OnGpu(dgamma_cpu), dbeta_gpu = OnGpu(dbeta_cpu);
  const Tensor dx_cpu =
      ops::LayerNormBackward(dy, x, gamma, cpu.mean, cpu.rstd, &dgamma_cpu, &dbeta_cpu);
  const Tensor dx_gpu = ops::LayerNormBackward(OnGpu(dy), OnGpu(x), OnGpu(gamma),
                                               OnGpu(cpu.mean), OnGpu(cpu.rstd), &dgamma_gpu,
                                               &dbeta_gpu);
  ExpectClose(Name("dx", c, shape), dx_gpu, dx_cpu, kTolerance);
  ExpectClose(Name("dgamma", c, shape), dgamma_gpu, dgamma_cpu, kTolerance);
  ExpectClose(Name("dbeta", c, shape), dbeta_gpu, dbeta_cpu, kTolerance);
}

TEST_F(CudaLayerNormTest, ForwardAndBackwardMatchCpu) {
  const std::vector<Case> cases = {{DType::kF32, DType::kF32},
                                   {DType::kF16, DType::kF16},
                                   {DType::kF16, DType::kF32},
                                   {DType::kF32, DType::kF16}};
  uint32_t seed = 1;
  for (const Shape& shape : Shapes()) {
    for (const Case& c : cases) {
      SCOPED_TRACE(Name("case", c, shape));
      CompareForwardAndBackward(c, shape, seed);
      seed += 10;
    }
  }
}

TEST_F(CudaLayerNormTest, BackwardIsDeterministic) {
  const Shape shape = {1000, 768};
  const Tensor x = OnGpu(RandomTensor(shape, DType::kF16, 1, 2.0f, 3.0f));
  const Tensor dy = OnGpu(RandomTensor(shape, DType::kF16, 2));
  const Tensor gamma = OnGpu(RandomTensor({768}, DType::kF32, 3, 0.5f, 1.0f));
  const Tensor beta = OnGpu(RandomTensor({768}, DType::kF32, 4));
  const ops::LayerNormOutput forward = ops::LayerNorm(x, gamma, beta, kEps, DType::kF16);
  Tensor dgamma[2], dbeta[2], dx[2];
  for (int run = 0; run < 2; ++run) {
    dgamma[run] = Tensor::Zeros({768}, DType::kF32, Device::kCuda);
    dbeta[run] = Tensor::Zeros({768}, DType::kF32, Device::kCuda);
    dx[run] = ops::LayerNormBackward(dy, x, gamma, forward.mean, forward.rstd, &dgamma[run],
                                     &dbeta[run]);
  }
  ExpectBitEqual("dx, second run", dx[1], dx[0].ToDevice(Device::kCpu));
  ExpectBitEqual("dgamma, second run", dgamma[1], dgamma[0].ToDevice(Device::kCpu));
  ExpectBitEqual("dbeta, second run", dbeta[1], dbeta[0].ToDevice(Device::kCpu));
}

}  // namespace
}  // namespace xlmr
