#include "kernels/cuda/embedding.h"

#include <cstdio>

#include "framework/core/check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/float_access.cuh"

namespace xlmr::kernels::cuda {
namespace {

// The id of token `position`; an id outside [0, vocab_size) stops the kernel (see embedding.h).
__device__ __forceinline__ int64_t CheckedId(const int32_t* ids, int64_t position,
                                             int64_t vocab_size) {
  const int64_t id = ids[position];
  if (id < 0 || id >= vocab_size) {
    printf("embedding id %lld at position %lld outside [0, %lld)\n", static_cast<long long>(id),
           static_cast<long long>(position), static_cast<long long>(vocab_size));
    __trap();
  }
  return id;
}

// One thread per output element (consecutive threads read consecutive table columns).
__global__ void EmbeddingForwardKernel(const float* __restrict__ table,
                                       const int32_t* __restrict__ ids, int64_t count,
                                       int64_t vocab_size, int64_t width, FloatsOut out) {
  for (int64_t i = GridStrideBegin(); i < count; i += GridStride()) {
    const int64_t position = i / width;
    const int64_t id = CheckedId(ids, position, vocab_size);
    out.Store(i, table[id * width + (i - position * width)]);
  }
}

// One thread per element of dy; repeated ids meet in the atomicAdd.
__global__ void EmbeddingBackwardKernel(FloatsIn dy, const int32_t* __restrict__ ids,
                                        int64_t count, int64_t vocab_size, int64_t width,
                                        int64_t padding_idx, float* __restrict__ dtable) {
  for (int64_t i = GridStrideBegin(); i < count; i += GridStride()) {
    const int64_t position = i / width;
    const int64_t id = CheckedId(ids, position, vocab_size);
    if (id == padding_idx) continue;
    atomicAdd(dtable + id * width + (i - position * width), dy[i]);
  }
}

// table/dtable: [V, H] f32 CUDA; ids: i32 CUDA.
void CheckTableAndIds(const char* op, const Tensor& table, const Tensor& ids) {
  XLMR_CHECK(table.device() == Device::kCuda && table.dtype() == DType::kF32 && table.rank() == 2)
      << op << ": the table must be a [V, H] f32 CUDA tensor";
  XLMR_CHECK(ids.device() == Device::kCuda && ids.dtype() == DType::kI32)
      << op << ": ids must be an i32 CUDA tensor";
}

}  // namespace

Tensor EmbeddingForward(const Tensor& table, const Tensor& ids, DType out_dtype) {
  CheckTableAndIds("cuda::EmbeddingForward", table, ids);
  const int64_t vocab_size = table.dim(0), width = table.dim(1);
  Shape out_shape = ids.shape();
  out_shape.push_back(width);
  Tensor out = Tensor::Zeros(out_shape, out_dtype, Device::kCuda, MemoryCategory::kActivations);
  const int64_t count = out.numel();
  if (count == 0) return out;
  EmbeddingForwardKernel<<<GridStrideBlocks(count), kThreadsPerBlock, 0, ComputeStream()>>>(
      table.data<float>(), ids.data<int32_t>(), count, vocab_size, width,
      WriteFloats(out, "cuda::EmbeddingForward out"));
  KERNEL_LAUNCH_CHECK();
  return out;
}

void EmbeddingBackward(const Tensor& dy, const Tensor& ids, int64_t padding_idx, Tensor* dtable) {
  XLMR_CHECK(dtable != nullptr) << "cuda::EmbeddingBackward: dtable is required";
  CheckTableAndIds("cuda::EmbeddingBackward", *dtable, ids);
  const int64_t vocab_size = dtable->dim(0), width = dtable->dim(1);
  XLMR_CHECK(dy.numel() == ids.numel() * width)
      << "cuda::EmbeddingBackward: dy " << ShapeString(dy.shape()) << " for "
      << ShapeString(ids.shape()) << " ids of width " << width;
  const int64_t count = dy.numel();
  if (count == 0) return;
  EmbeddingBackwardKernel<<<GridStrideBlocks(count), kThreadsPerBlock, 0, ComputeStream()>>>(
      ReadFloats(dy, "cuda::EmbeddingBackward dy"), ids.data<int32_t>(), count, vocab_size, width,
      padding_idx, dtable->data<float>());
  KERNEL_LAUNCH_CHECK();
}

}  // namespace xlmr::kernels::cuda
