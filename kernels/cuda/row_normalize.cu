#include "kernels/cuda/row_normalize.h"

#include "framework/core/check.h"
#include "kernels/common/row_normalize.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/float_access.cuh"

namespace xlmr::kernels::cuda {
namespace {

__global__ void NormalizeRowsKernel(const float* __restrict__ x, int64_t rows, int64_t width,
                                    float multiplier, float eps, float* __restrict__ y) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    NormalizeRow(x + r * width, width, multiplier, eps, y + r * width);
  }
}

__global__ void NormalizeRowsBackwardKernel(const float* __restrict__ dy, const float* __restrict__ x,
                                            int64_t rows, int64_t width, float multiplier, float eps,
                                            float* __restrict__ dx) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    NormalizeRowBackward(dy + r * width, x + r * width, width, multiplier, eps, dx + r * width);
  }
}

void CheckRows(const Tensor& t, const char* what) {
  XLMR_CHECK(t.device() == Device::kCuda && t.dtype() == DType::kF32 && t.rank() == 2)
      << what << " must be an [N, H] f32 CUDA tensor, is " << DTypeName(t.dtype()) << " "
      << ShapeString(t.shape()) << " on " << DeviceName(t.device());
}

}  // namespace

Tensor NormalizeRows(const Tensor& x, float multiplier, float eps) {
  CheckRows(x, "cuda::NormalizeRows x");
  Tensor y = Tensor::Empty(x.shape(), DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  if (x.dim(0) == 0) return y;
  NormalizeRowsKernel<<<GridStrideBlocks(x.dim(0)), kThreadsPerBlock, 0, ComputeStream()>>>(
      x.data<float>(), x.dim(0), x.dim(1), multiplier, eps, y.data<float>());
  KERNEL_LAUNCH_CHECK() << "(row normalisation)";
  return y;
}

void NormalizeRowsBackward(const Tensor& dy, const Tensor& x, float multiplier, float eps, Tensor* dx) {
  CheckRows(dy, "cuda::NormalizeRowsBackward dy");
  CheckRows(x, "cuda::NormalizeRowsBackward x");
  CheckRows(*dx, "cuda::NormalizeRowsBackward dx");
  if (x.dim(0) == 0) return;
  NormalizeRowsBackwardKernel<<<GridStrideBlocks(x.dim(0)), kThreadsPerBlock, 0, ComputeStream()>>>(
      dy.data<float>(), x.data<float>(), x.dim(0), x.dim(1), multiplier, eps, dx->data<float>());
  KERNEL_LAUNCH_CHECK() << "(row normalisation backward)";
}

}  // namespace xlmr::kernels::cuda
