#include "kernels/cuda/pooling.h"

#include "framework/core/check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/float_access.cuh"

namespace xlmr::kernels::cuda {
namespace {

// Where a sequence's tokens are: the masked positions of padded row b (stride S), or the rows
// [cu_seqlens[b], cu_seqlens[b + 1]) of a packed batch.
struct MaskedSequences {
  const int32_t* mask;
  int64_t seq;
  __device__ int64_t begin(int64_t b) const { return b * seq; }
  __device__ int64_t end(int64_t b) const { return (b + 1) * seq; }
  __device__ bool member(int64_t row) const { return mask[row] != 0; }
};

struct PackedSequences {
  const int32_t* cu_seqlens;
  __device__ int64_t begin(int64_t b) const { return cu_seqlens[b]; }
  __device__ int64_t end(int64_t b) const { return cu_seqlens[b + 1]; }
  __device__ bool member(int64_t) const { return true; }
};

// One thread per (sequence, feature): the float sum of its rows in order, then one division
// (the CPU kernel's order; 0 for a sequence without tokens).
template <typename Sequences>
__global__ void MeanPoolKernel(const float* __restrict__ x, Sequences sequences, int64_t batch,
                               int64_t hidden, float* __restrict__ y) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < batch * hidden;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = i / hidden, h = i % hidden;
    float sum = 0.0f;
    int64_t count = 0;
    for (int64_t row = sequences.begin(b); row < sequences.end(b); ++row) {
      if (!sequences.member(row)) continue;
      sum = __fadd_rn(sum, x[row * hidden + h]);
      ++count;
    }
    y[i] = count == 0 ? sum : sum / static_cast<float>(count);
  }
}

// One thread per (sequence, feature): dy / count into each of its rows (dx starts zeroed).
template <typename Sequences>
__global__ void MeanPoolBackwardKernel(const float* __restrict__ dy, Sequences sequences,
                                       int64_t batch, int64_t hidden, float* __restrict__ dx) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < batch * hidden;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = i / hidden, h = i % hidden;
    int64_t count = 0;
    for (int64_t row = sequences.begin(b); row < sequences.end(b); ++row) count += sequences.member(row);
    for (int64_t row = sequences.begin(b); row < sequences.end(b); ++row) {
      if (sequences.member(row)) dx[row * hidden + h] = dy[i] / static_cast<float>(count);
    }
  }
}

void CheckCuda(const Tensor& t, DType dtype, const char* what) {
  XLMR_CHECK(t.device() == Device::kCuda && t.dtype() == dtype)
      << what << " must be a " << DTypeName(dtype) << " CUDA tensor, is " << DTypeName(t.dtype())
      << " on " << DeviceName(t.device());
}

template <typename Sequences>
Tensor Pool(const Tensor& x, Sequences sequences, int64_t batch, int64_t hidden) {
  Tensor y = Tensor::Empty({batch, hidden}, DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  if (batch * hidden == 0) return y;
  MeanPoolKernel<<<GridStrideBlocks(batch * hidden), kThreadsPerBlock, 0, ComputeStream()>>>(
      x.data<float>(), sequences, batch, hidden, y.data<float>());
  KERNEL_LAUNCH_CHECK() << "(mean pooling)";
  return y;
}

template <typename Sequences>
Tensor PoolBackward(const Tensor& dy, Sequences sequences, const Shape& x_shape) {
  const int64_t batch = dy.dim(0), hidden = dy.dim(1);
  Tensor dx = Tensor::Zeros(x_shape, DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  if (batch * hidden == 0) return dx;
  MeanPoolBackwardKernel<<<GridStrideBlocks(batch * hidden), kThreadsPerBlock, 0, ComputeStream()>>>(
      dy.data<float>(), sequences, batch, hidden, dx.data<float>());
  KERNEL_LAUNCH_CHECK() << "(mean pooling backward)";
  return dx;
}

}  // namespace

Tensor MaskedMeanPool(const Tensor& x, const Tensor& mask) {
  CheckCuda(x, DType::kF32, "cuda::MaskedMeanPool x");
  CheckCuda(mask, DType::kI32, "cuda::MaskedMeanPool mask");
  return Pool(x, MaskedSequences{mask.data<int32_t>(), x.dim(1)}, x.dim(0), x.dim(2));
}

Tensor MaskedMeanPoolBackward(const Tensor& dy, const Tensor& mask) {
  CheckCuda(dy, DType::kF32, "cuda::MaskedMeanPoolBackward dy");
  CheckCuda(mask, DType::kI32, "cuda::MaskedMeanPoolBackward mask");
  return PoolBackward(dy, MaskedSequences{mask.data<int32_t>(), mask.dim(1)},
                      {mask.dim(0), mask.dim(1), dy.dim(1)});
}

Tensor SegmentMeanPool(const Tensor& x, const Tensor& cu_seqlens) {
  CheckCuda(x, DType::kF32, "cuda::SegmentMeanPool x");
  CheckCuda(cu_seqlens, DType::kI32, "cuda::SegmentMeanPool cu_seqlens");
  return Pool(x, PackedSequences{cu_seqlens.data<int32_t>()}, cu_seqlens.numel() - 1, x.dim(1));
}

Tensor SegmentMeanPoolBackward(const Tensor& dy, const Tensor& cu_seqlens, int64_t rows) {
  CheckCuda(dy, DType::kF32, "cuda::SegmentMeanPoolBackward dy");
  CheckCuda(cu_seqlens, DType::kI32, "cuda::SegmentMeanPoolBackward cu_seqlens");
  return PoolBackward(dy, PackedSequences{cu_seqlens.data<int32_t>()}, {rows, dy.dim(1)});
}

}  // namespace xlmr::kernels::cuda
