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

// Element (i, r, c) of a batch of matrices laid out as `layout`, for i, r, c from one flat index
// over batch_count * rows * cols.
struct MatrixIndexer {
  int64_t rows, cols;
  __device__ __forceinline__ int64_t Offset(int64_t flat, const MatrixLayout& layout) const {
    const int64_t c = flat % cols, r = (flat / cols) % rows, i = flat / (cols * rows);
    return i * layout.batch_stride + r * layout.ld + c;
  }
};

template <typename Src, typename Dst>
__global__ void CastMatricesKernel(const Src* __restrict__ src, MatrixLayout src_layout,
                                   Dst* __restrict__ dst, MatrixLayout dst_layout,
                                   MatrixIndexer indexer, int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t flat = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; flat < count;
       flat += stride) {
    dst[indexer.Offset(flat, dst_layout)] =
        RoundFromFloat<Dst>(WidenToFloat(src[indexer.Offset(flat, src_layout)]));
  }
}

// Grid-stride blocks for `count` elements: enough to fill the GPU, no more.
int BlocksFor(int64_t count) {
  const int64_t blocks_needed = (count + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const int64_t blocks_resident =
      static_cast<int64_t>(CudaContext::Current().multiprocessor_count()) *
      kBlocksPerMultiprocessor;
  return static_cast<int>(std::min(blocks_needed, blocks_resident));
}

// What one conversion launches: the whole contiguous tensor, or a batch of matrices.
struct CastWork {
  const Tensor& src;
  Tensor* dst;
  int64_t batch_count = 0;  // 0: CastTensor (contiguous), else CastMatrices with the layouts
  MatrixLayout src_layout, dst_layout;
};

template <typename Src, typename Dst>
void LaunchCast(const CastWork& work) {
  const cudaStream_t stream = CudaContext::Current().compute_stream();
  const auto* src = static_cast<const Src*>(work.src.raw_data());
  auto* dst = static_cast<Dst*>(work.dst->raw_data());
  if (work.batch_count == 0) {
    const int64_t count = work.src.numel();
    CastKernel<Src, Dst><<<BlocksFor(count), kThreadsPerBlock, 0, stream>>>(src, dst, count);
  } else {
    const MatrixIndexer indexer{work.dst_layout.rows, work.dst_layout.cols};
    const int64_t count = work.batch_count * indexer.rows * indexer.cols;
    CastMatricesKernel<Src, Dst><<<BlocksFor(count), kThreadsPerBlock, 0, stream>>>(
        src, work.src_layout, dst, work.dst_layout, indexer, count);
  }
  KERNEL_LAUNCH_CHECK();
}

// Second level of the (source, destination) dtype dispatch.
template <typename Src>
void LaunchCastTo(const CastWork& work) {
  switch (work.dst->dtype()) {
    case DType::kF32: return LaunchCast<Src, float>(work);
    case DType::kF16: return LaunchCast<Src, __half>(work);
    case DType::kBF16: return LaunchCast<Src, __nv_bfloat16>(work);
    default: break;
  }
  XLMR_CHECK(false) << "cast: destination dtype " << DTypeName(work.dst->dtype())
                    << " is not f32, f16 or bf16";
}

void LaunchCastFrom(const CastWork& work) {
  switch (work.src.dtype()) {
    case DType::kF32: return LaunchCastTo<float>(work);
    case DType::kF16: return LaunchCastTo<__half>(work);
    case DType::kBF16: return LaunchCastTo<__nv_bfloat16>(work);
    default: break;
  }
  XLMR_CHECK(false) << "cast: source dtype " << DTypeName(work.src.dtype())
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
  LaunchCastFrom(CastWork{src, dst});
}

namespace {

// The last element a batch of `layout` matrices addresses, plus one (0 when empty).
int64_t ElementsAddressed(int64_t batch_count, const MatrixLayout& layout) {
  if (layout.rows == 0 || layout.cols == 0) return 0;
  return (batch_count - 1) * layout.batch_stride + (layout.rows - 1) * layout.ld + layout.cols;
}

void CheckLayout(const char* name, const Tensor& t, const MatrixLayout& layout,
                 int64_t batch_count) {
  XLMR_CHECK(layout.rows >= 0 && layout.cols >= 0 && layout.ld >= layout.cols &&
             layout.batch_stride >= 0)
      << "CastMatrices: " << name << " layout rows " << layout.rows << " cols " << layout.cols
      << " ld " << layout.ld << " batch stride " << layout.batch_stride;
  XLMR_CHECK(ElementsAddressed(batch_count, layout) <= t.numel())
      << "CastMatrices: " << name << " layout reaches element "
      << ElementsAddressed(batch_count, layout) - 1 << " of a tensor of " << t.numel();
}

}  // namespace

void CastMatrices(int64_t batch_count, const Tensor& src, const MatrixLayout& src_layout,
                  Tensor* dst, const MatrixLayout& dst_layout) {
  XLMR_CHECK(src.defined() && dst != nullptr && dst->defined());
  XLMR_CHECK(src.device() == Device::kCuda && dst->device() == Device::kCuda)
      << "CastMatrices: " << DeviceName(src.device()) << " -> " << DeviceName(dst->device());
  XLMR_CHECK(IsCastable(src.dtype()) && IsCastable(dst->dtype()))
      << "CastMatrices: " << DTypeName(src.dtype()) << " -> " << DTypeName(dst->dtype());
  XLMR_CHECK(batch_count >= 1) << "CastMatrices: batch count " << batch_count;
  XLMR_CHECK(src_layout.rows == dst_layout.rows && src_layout.cols == dst_layout.cols)
      << "CastMatrices: [" << src_layout.rows << "," << src_layout.cols << "] -> ["
      << dst_layout.rows << "," << dst_layout.cols << "]";
  XLMR_CHECK(batch_count == 1 || dst_layout.batch_stride >= dst_layout.rows * dst_layout.ld)
      << "CastMatrices: the destination matrices overlap (batch stride "
      << dst_layout.batch_stride << ")";
  CheckLayout("source", src, src_layout, batch_count);
  CheckLayout("destination", *dst, dst_layout, batch_count);
  XLMR_CHECK(!BytesOverlap(src, *dst)) << "CastMatrices: source and destination overlap";
  if (ElementsAddressed(batch_count, dst_layout) == 0) return;
  LaunchCastFrom(CastWork{src, dst, batch_count, src_layout, dst_layout});
}

}  // namespace xlmr::kernels::cuda
