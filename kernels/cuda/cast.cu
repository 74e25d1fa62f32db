#include "kernels/cuda/cast.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "framework/core/check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"

namespace xlmr::kernels::cuda {
namespace {

constexpr int kThreadsPerBlock = 256;
// sm_80 and sm_90 keep 2048 threads resident per SM: 8 blocks of 256 fill it. More blocks than
// that only add scheduling; the grid-stride loop covers larger tensors.
constexpr int kBlocksPerMultiprocessor = 8;

// Exact widening to fp32 (every f16 and bf16 value is a float).
__device__ __forceinline__ float WidenToFloat(float value) { return value; }
__device__ __forceinline__ float WidenToFloat(__half value) { return __half2float(value); }
__device__ __forceinline__ float WidenToFloat(__nv_bfloat16 value) {
  return __bfloat162float(value);
}

// The one rounding step: IEEE round to nearest, ties to even.
template <typename T>
__device__ T RoundFromFloat(float value);
template <>
__device__ __forceinline__ float RoundFromFloat<float>(float value) {
  return value;
}
template <>
__device__ __forceinline__ __half RoundFromFloat<__half>(float value) {
  return __float2half_rn(value);
}
template <>
__device__ __forceinline__ __nv_bfloat16 RoundFromFloat<__nv_bfloat16>(float value) {
  return __float2bfloat16_rn(value);
}

template <typename Src, typename Dst>
__global__ void CastKernel(const Src* __restrict__ src, Dst* __restrict__ dst, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    dst[i] = RoundFromFloat<Dst>(WidenToFloat(src[i]));
  }
}

template <typename Src, typename Dst>
void LaunchCast(const Tensor& src, Tensor* dst) {
  CudaContext& context = CudaContext::Current();
  const int64_t count = src.numel();
  const int64_t blocks_needed = (count + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const int64_t blocks_resident =
      static_cast<int64_t>(context.multiprocessor_count()) * kBlocksPerMultiprocessor;
  const int blocks = static_cast<int>(std::min(blocks_needed, blocks_resident));
  CastKernel<Src, Dst><<<blocks, kThreadsPerBlock, 0, context.compute_stream()>>>(
      static_cast<const Src*>(src.raw_data()), static_cast<Dst*>(dst->raw_data()), count);
  KERNEL_LAUNCH_CHECK();
}

// Second level of the (source, destination) dtype dispatch.
template <typename Src>
void LaunchCastTo(const Tensor& src, Tensor* dst) {
  switch (dst->dtype()) {
    case DType::kF32: return LaunchCast<Src, float>(src, dst);
    case DType::kF16: return LaunchCast<Src, __half>(src, dst);
    case DType::kBF16: return LaunchCast<Src, __nv_bfloat16>(src, dst);
    default: break;
  }
  XLMR_CHECK(false) << "CastTensor: destination dtype " << DTypeName(dst->dtype())
                    << " is not f32, f16 or bf16";
}

bool IsCastable(DType dtype) {
  return dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

bool BytesOverlap(const Tensor& a, const Tensor& b) {
  if (a.storage() != b.storage()) return false;
  return a.byte_offset() < b.byte_offset() + b.bytes() &&
         b.byte_offset() < a.byte_offset() + a.bytes();
}

}  // namespace

void CastTensor(const Tensor& src, Tensor* dst) {
  XLMR_CHECK(src.defined() && dst != nullptr && dst->defined());
  XLMR_CHECK(src.device() == Device::kCuda && dst->device() == Device::kCuda)
      << "CastTensor: " << DeviceName(src.device()) << " -> " << DeviceName(dst->device());
  XLMR_CHECK(src.shape() == dst->shape())
      << "CastTensor: " << ShapeString(src.shape()) << " -> " << ShapeString(dst->shape());
  XLMR_CHECK(IsCastable(src.dtype()) && IsCastable(dst->dtype()))
      << "CastTensor: " << DTypeName(src.dtype()) << " -> " << DTypeName(dst->dtype());
  XLMR_CHECK(!BytesOverlap(src, *dst)) << "CastTensor: source and destination overlap";
  if (src.numel() == 0) return;  // a launch with an empty grid is an error
  if (src.dtype() == dst->dtype()) {
    CUDA_CHECK(cudaMemcpyAsync(dst->raw_data(), src.raw_data(), src.bytes(),
                               cudaMemcpyDeviceToDevice, CudaContext::Current().compute_stream()));
    return;
  }
  switch (src.dtype()) {
    case DType::kF32: return LaunchCastTo<float>(src, dst);
    case DType::kF16: return LaunchCastTo<__half>(src, dst);
    case DType::kBF16: return LaunchCastTo<__nv_bfloat16>(src, dst);
    default: break;  // excluded by IsCastable above
  }
}

}  // namespace xlmr::kernels::cuda
