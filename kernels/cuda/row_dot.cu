#include "kernels/cuda/row_dot.h"

#include "framework/core/check.h"
#include "kernels/common/row_dot.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/float_access.cuh"

namespace xlmr::kernels::cuda {
namespace {

__global__ void RowDotsKernel(const float* __restrict__ a, const float* __restrict__ b, int64_t rows,
                              int64_t width, float* __restrict__ dots) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    dots[r] = RowDot(a + r * width, b + r * width, width);
  }
}

// One thread per element of [N, H]: both gradients of element i share the row's d_dots.
__global__ void RowDotsBackwardKernel(const float* __restrict__ d_dots, const float* __restrict__ a,
                                      const float* __restrict__ b, int64_t elements, int64_t width,
                                      float* __restrict__ da, float* __restrict__ db) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < elements;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float d = d_dots[i / width];
    da[i] = RowDotGradient(d, b[i]);
    db[i] = RowDotGradient(d, a[i]);
  }
}

void CheckRows(const Tensor& t, const char* what) {
  XLMR_CHECK(t.device() == Device::kCuda && t.dtype() == DType::kF32 && t.rank() == 2)
      << what << " must be an [N, H] f32 CUDA tensor, is " << DTypeName(t.dtype()) << " "
      << ShapeString(t.shape()) << " on " << DeviceName(t.device());
}

}  // namespace

Tensor RowDots(const Tensor& a, const Tensor& b) {
  CheckRows(a, "cuda::RowDots a");
  CheckRows(b, "cuda::RowDots b");
  Tensor dots = Tensor::Empty({a.dim(0)}, DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  if (a.dim(0) == 0) return dots;
  RowDotsKernel<<<GridStrideBlocks(a.dim(0)), kThreadsPerBlock, 0, ComputeStream()>>>(
      a.data<float>(), b.data<float>(), a.dim(0), a.dim(1), dots.data<float>());
  KERNEL_LAUNCH_CHECK() << "(row dot products)";
  return dots;
}

void RowDotsBackward(const Tensor& d_dots, const Tensor& a, const Tensor& b, Tensor* da, Tensor* db) {
  CheckRows(a, "cuda::RowDotsBackward a");
  CheckRows(b, "cuda::RowDotsBackward b");
  CheckRows(*da, "cuda::RowDotsBackward da");
  CheckRows(*db, "cuda::RowDotsBackward db");
  XLMR_CHECK(d_dots.device() == Device::kCuda && d_dots.dtype() == DType::kF32)
      << "cuda::RowDotsBackward d_dots must be an f32 CUDA tensor";
  const int64_t elements = a.numel();
  if (elements == 0) return;  // no rows, or rows of width 0: nothing to write
  RowDotsBackwardKernel<<<GridStrideBlocks(elements), kThreadsPerBlock, 0, ComputeStream()>>>(
      d_dots.data<float>(), a.data<float>(), b.data<float>(), elements, a.dim(1), da->data<float>(),
      db->data<float>());
  KERNEL_LAUNCH_CHECK() << "(row dot products backward)";
}

}  // namespace xlmr::kernels::cuda
