// Reading and writing f32|f16|bf16 tensors as float in CUDA kernels, and sizing their grids: the
// device half of the numerics contract of kernels/cpu/float_access.h (read every element exactly
// into fp32, compute in fp32, round once to the output dtype on write with __float2half_rn /
// __float2bfloat16_rn).
//
// The dtype is a run-time field rather than a template parameter: every thread of a launch takes
// the same branch, so it costs nothing measurable in these memory-bound kernels, and each op
// needs one kernel instead of one per dtype combination.
//
// Device-side header: include it only from .cu files of kernels/cuda.
#ifndef XLMR_KERNELS_CUDA_FLOAT_ACCESS_CUH_
#define XLMR_KERNELS_CUDA_FLOAT_ACCESS_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "framework/core/check.h"
#include "framework/tensor/tensor.h"
#include "kernels/cuda/device_context.h"

namespace xlmr::kernels::cuda {

// How a FloatsIn/FloatsOut buffer stores its elements.
enum class FloatStorage : uint8_t { kF32, kF16, kBF16 };

// Four 16-bit elements from one 8-byte word, in memory order.
__device__ __forceinline__ float4 HalvesToFloat4(uint2 word, FloatStorage storage) {
  if (storage == FloatStorage::kF16) {
    const float2 low = __half22float2(*reinterpret_cast<const __half2*>(&word.x));
    const float2 high = __half22float2(*reinterpret_cast<const __half2*>(&word.y));
    return {low.x, low.y, high.x, high.y};
  }
  const float2 low = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&word.x));
  const float2 high = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&word.y));
  return {low.x, low.y, high.x, high.y};
}

// A read-only f32, f16 or bf16 element buffer.
struct FloatsIn {
  const void* data;
  FloatStorage storage;

  // Elements [4q, 4q + 4) in one 16-byte (f32) or 8-byte (f16, bf16) load: the same values as
  // four operator[] reads. Only where FourWide(the tensor) holds.
  __device__ __forceinline__ float4 Load4(int64_t q) const {
    if (storage == FloatStorage::kF32) return static_cast<const float4*>(data)[q];
    return HalvesToFloat4(static_cast<const uint2*>(data)[q], storage);
  }

  __device__ __forceinline__ float operator[](int64_t i) const {
    switch (storage) {
      case FloatStorage::kF16: return __half2float(static_cast<const __half*>(data)[i]);
      case FloatStorage::kBF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(data)[i]);
      default: return static_cast<const float*>(data)[i];
    }
  }
};

// A writable f32, f16 or bf16 element buffer.
struct FloatsOut {
  void* data;
  FloatStorage storage;

  // Rounds `value` once (to nearest even; fp16 overflow gives +-inf) and stores it at `i`.
  __device__ __forceinline__ void Store(int64_t i, float value) const {
    switch (storage) {
      case FloatStorage::kF16: static_cast<__half*>(data)[i] = __float2half_rn(value); break;
      case FloatStorage::kBF16:
        static_cast<__nv_bfloat16*>(data)[i] = __float2bfloat16_rn(value);
        break;
      default: static_cast<float*>(data)[i] = value;
    }
  }

  // Stores elements [4q, 4q + 4), each rounded once as Store does, in one 16-byte (f32) or
  // 8-byte (f16, bf16) write. Only where FourWide(the tensor) holds.
  __device__ __forceinline__ void Store4(int64_t q, float4 v) const {
    if (storage == FloatStorage::kF32) {
      static_cast<float4*>(data)[q] = v;
      return;
    }
    uint2 word;
    if (storage == FloatStorage::kF16) {
      const __half2 low = __floats2half2_rn(v.x, v.y), high = __floats2half2_rn(v.z, v.w);
      word = {*reinterpret_cast<const uint32_t*>(&low), *reinterpret_cast<const uint32_t*>(&high)};
    } else {
      const __nv_bfloat162 low = __floats2bfloat162_rn(v.x, v.y), high = __floats2bfloat162_rn(v.z, v.w);
      word = {*reinterpret_cast<const uint32_t*>(&low), *reinterpret_cast<const uint32_t*>(&high)};
    }
    static_cast<uint2*>(data)[q] = word;
  }
};

// The storage of a CUDA tensor of dtype f32, f16 or bf16 (XLMR_CHECK otherwise).
inline FloatStorage StorageOf(const Tensor& t, const char* what) {
  XLMR_CHECK(t.device() == Device::kCuda) << what << " must be a CUDA tensor";
  XLMR_CHECK(IsFloating(t.dtype())) << what << " must be f32, f16 or bf16, is " << DTypeName(t.dtype());
  return t.dtype() == DType::kF16    ? FloatStorage::kF16
         : t.dtype() == DType::kBF16 ? FloatStorage::kBF16
                                     : FloatStorage::kF32;
}
// Whether `t` can be read and written four elements at a time (Load4, Store4): its element count
// is a multiple of 4 and its data starts on a multiple of 4 elements' bytes.
inline bool FourWide(const Tensor& t) {
  return t.numel() % 4 == 0 && reinterpret_cast<uintptr_t>(t.raw_data()) % (4 * SizeOf(t.dtype())) == 0;
}

inline FloatsIn ReadFloats(const Tensor& t, const char* what) {
  return {t.raw_data(), StorageOf(t, what)};
}
inline FloatsOut WriteFloats(const Tensor& t, const char* what) {
  return {t.raw_data(), StorageOf(t, what)};
}

// Threads per block of the grid-stride kernels.
inline constexpr int kThreadsPerBlock = 256;

// Blocks for a grid-stride loop over `work_items` items of one thread each: enough to cover them,
// capped at what the GPU keeps resident (sm_80/sm_90: 2048 threads, i.e. 8 blocks of 256, per
// multiprocessor); the loop covers the rest. `work_items` must be > 0 (an empty grid is a launch
// error, so callers return early on empty tensors).
inline int GridStrideBlocks(int64_t work_items) {
  constexpr int64_t kBlocksPerMultiprocessor = 8;
  const int64_t needed = (work_items + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const int64_t resident =
      int64_t{CudaContext::Current().multiprocessor_count()} * kBlocksPerMultiprocessor;
  return static_cast<int>(std::max<int64_t>(1, std::min(needed, resident)));
}

// The compute stream as the runtime API's type.
inline cudaStream_t ComputeStream() { return CudaContext::Current().compute_stream(); }

// The first index of this thread in a grid-stride loop, and the stride.
__device__ __forceinline__ int64_t GridStrideBegin() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ int64_t GridStride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_FLOAT_ACCESS_CUH_
