#include "kernels/cuda/embedding.h"

#include <algorithm>
#include <climits>
#include <cstdio>

#include <cub/device/device_radix_sort.cuh>

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

// Position t of the id-sorted order starts the run of an id: the first occurrence of that id.
__device__ __forceinline__ bool StartsRun(const int32_t* sorted_ids, int64_t t) {
  return t == 0 || sorted_ids[t] != sorted_ids[t - 1];
}

// Columns of a table row per block of the backward. A run of one id is summed by
// width / kColumnsPerBlock blocks side by side (blockIdx.y picks the slice), so the longest run,
// the one-row token-type table where every token has id 0 (B x S rows), spreads over that many
// multiprocessors instead of one block walking every column in turn.
constexpr int kColumnsPerBlock = 64;

// Backward over the id-sorted order (sorted_ids, and the positions they came from, stably, so
// each run of an id lists its positions in increasing order). Block (x, y) handles sorted indices
// x, x + gridDim.x, ... and the columns of slice y; for an index that starts a run it adds the
// run's dy rows, in position order, onto the table row, one thread per column: the CPU's sequence
// of fp32 additions for every element, so the result is bit for bit its own.
__global__ void EmbeddingBackwardSortedKernel(FloatsIn dy, const int32_t* __restrict__ sorted_ids,
                                              const int32_t* __restrict__ sorted_positions,
                                              int64_t count, int64_t vocab_size, int64_t width,
                                              int64_t padding_idx, float* __restrict__ dtable) {
  const int64_t column = static_cast<int64_t>(blockIdx.y) * blockDim.x + threadIdx.x;
  if (column >= width) return;  // the last slice's spare threads (no barrier in this kernel)
  for (int64_t t = blockIdx.x; t < count; t += gridDim.x) {
    if (!StartsRun(sorted_ids, t)) continue;
    const int64_t id = CheckedId(sorted_ids, t, vocab_size);
    if (id == padding_idx) continue;
    // The run's end, by binary search (sorted_ids ascends), so that the loop below has a known
    // trip count and the compiler can issue the loads of several rows ahead of their additions,
    // which stay one after another in position order.
    int64_t low = t + 1, high = count;
    while (low < high) {
      const int64_t middle = low + (high - low) / 2;
      if (sorted_ids[middle] == id) low = middle + 1; else high = middle;
    }
    float sum = dtable[id * width + column];
#pragma unroll 8
    for (int64_t r = t; r < low; ++r) {
      sum += dy[static_cast<int64_t>(sorted_positions[r]) * width + column];
    }
    dtable[id * width + column] = sum;
  }
}

__global__ void IotaKernel(int32_t* __restrict__ values, int64_t count) {
  for (int64_t i = GridStrideBegin(); i < count; i += GridStride()) values[i] = static_cast<int32_t>(i);
}

// The ids and their positions, sorted by id with equal ids in position order (CUB's radix sort
// is stable), on the compute stream.
struct SortedIds {
  Tensor ids;
  Tensor positions;
};

SortedIds SortIdsStably(const Tensor& ids) {
  const int64_t count = ids.numel();
  XLMR_CHECK(count <= INT32_MAX) << "cuda::EmbeddingBackward: " << count
                                 << " ids exceed the sort's int32 positions";
  const int n = static_cast<int>(count);
  // Every scratch buffer is written before it is read: positions by IotaKernel, the sorted
  // outputs by the sort, and CUB's temporary storage needs no initial contents.
  auto scratch = [](int64_t elements) {
    return Tensor::Empty({elements}, DType::kI32, Device::kCuda, MemoryCategory::kWorkspace);
  };
  Tensor positions = scratch(count);
  IotaKernel<<<GridStrideBlocks(count), kThreadsPerBlock, 0, ComputeStream()>>>(
      positions.data<int32_t>(), count);
  KERNEL_LAUNCH_CHECK();
  SortedIds sorted{scratch(count), scratch(count)};
  size_t temp_bytes = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, ids.data<int32_t>(),
                                             sorted.ids.data<int32_t>(), positions.data<int32_t>(),
                                             sorted.positions.data<int32_t>(), n, 0, 32,
                                             ComputeStream()));
  Tensor temp = scratch(static_cast<int64_t>((temp_bytes + sizeof(int32_t) - 1) / sizeof(int32_t)));
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.raw_data(), temp_bytes, ids.data<int32_t>(),
                                             sorted.ids.data<int32_t>(), positions.data<int32_t>(),
                                             sorted.positions.data<int32_t>(), n, 0, 32,
                                             ComputeStream()));
  return sorted;
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
  Tensor out = Tensor::Empty(out_shape, out_dtype, Device::kCuda, MemoryCategory::kActivations);
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
  const SortedIds sorted = SortIdsStably(ids);
  const int64_t positions = ids.numel();
  const int threads = static_cast<int>(std::min<int64_t>(kColumnsPerBlock, ((width + 31) / 32) * 32));
  const int64_t slices = (width + threads - 1) / threads;
  XLMR_CHECK(slices <= 65535) << "cuda::EmbeddingBackward: width " << width << " is too wide";
  // About 2^20 blocks in all at most; the kernel strides over the sorted indices beyond that.
  const int64_t blocks = std::min<int64_t>(positions, std::max<int64_t>(1, (int64_t{1} << 20) / slices));
  const dim3 grid(static_cast<unsigned>(blocks), static_cast<unsigned>(slices));
  EmbeddingBackwardSortedKernel<<<grid, threads, 0, ComputeStream()>>>(
      ReadFloats(dy, "cuda::EmbeddingBackward dy"), sorted.ids.data<int32_t>(),
      sorted.positions.data<int32_t>(), positions, vocab_size, width, padding_idx,
      dtable->data<float>());
  KERNEL_LAUNCH_CHECK();
}

}  // namespace xlmr::kernels::cuda
