#include "kernels/cuda/elementwise.h"

#include "framework/core/check.h"
#include "kernels/cuda/cast.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/float_access.cuh"

namespace xlmr::kernels::cuda {
namespace {

// __fadd_rn: an IEEE fp32 addition, as on the CPU.
__global__ void AddKernel(FloatsIn a, FloatsIn b, FloatsOut out, int64_t count) {
  for (int64_t i = GridStrideBegin(); i < count; i += GridStride()) {
    out.Store(i, __fadd_rn(a[i], b[i]));
  }
}

}  // namespace

Tensor AddForward(const Tensor& a, const Tensor& b, DType out_dtype) {
  XLMR_CHECK(a.shape() == b.shape())
      << "cuda::AddForward: " << ShapeString(a.shape()) << " + " << ShapeString(b.shape());
  Tensor out = Tensor::Empty(a.shape(), out_dtype, Device::kCuda, MemoryCategory::kActivations);
  const int64_t count = a.numel();
  if (count == 0) return out;
  AddKernel<<<GridStrideBlocks(count), kThreadsPerBlock, 0, ComputeStream()>>>(
      ReadFloats(a, "cuda::AddForward a"), ReadFloats(b, "cuda::AddForward b"),
      WriteFloats(out, "cuda::AddForward out"), count);
  KERNEL_LAUNCH_CHECK();
  return out;
}

void CastInto(const Tensor& x, Tensor* out) {
  XLMR_CHECK(out != nullptr) << "cuda::CastInto: out is required";
  CastTensor(x, out);
}

}  // namespace xlmr::kernels::cuda
