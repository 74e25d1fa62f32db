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

// Four elements per thread and step (float_access.cuh's Load4/Store4); quads = count / 4.
__global__ void AddKernel4(FloatsIn a, FloatsIn b, FloatsOut out, int64_t quads) {
  for (int64_t q = GridStrideBegin(); q < quads; q += GridStride()) {
    const float4 u = a.Load4(q), v = b.Load4(q);
    out.Store4(q, {__fadd_rn(u.x, v.x), __fadd_rn(u.y, v.y), __fadd_rn(u.z, v.z), __fadd_rn(u.w, v.w)});
  }
}

}  // namespace

Tensor AddForward(const Tensor& a, const Tensor& b, DType out_dtype) {
  XLMR_CHECK(a.shape() == b.shape())
      << "cuda::AddForward: " << ShapeString(a.shape()) << " + " << ShapeString(b.shape());
  Tensor out = Tensor::Empty(a.shape(), out_dtype, Device::kCuda, MemoryCategory::kActivations);
  const int64_t count = a.numel();
  if (count == 0) return out;
  const FloatsIn in_a = ReadFloats(a, "cuda::AddForward a"), in_b = ReadFloats(b, "cuda::AddForward b");
  const FloatsOut sum = WriteFloats(out, "cuda::AddForward out");
  if (FourWide(a) && FourWide(b) && FourWide(out)) {
    AddKernel4<<<GridStrideBlocks(count / 4), kThreadsPerBlock, 0, ComputeStream()>>>(in_a, in_b, sum, count / 4);
  } else {
    AddKernel<<<GridStrideBlocks(count), kThreadsPerBlock, 0, ComputeStream()>>>(in_a, in_b, sum, count);
  }
  KERNEL_LAUNCH_CHECK();
  return out;
}

void CastInto(const Tensor& x, Tensor* out) {
  XLMR_CHECK(out != nullptr) << "cuda::CastInto: out is required";
  CastTensor(x, out);
}

}  // namespace xlmr::kernels::cuda
