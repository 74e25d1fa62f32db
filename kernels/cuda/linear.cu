#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "framework/core/check.h"
#include "kernels/cuda/cast.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/linear.h"

namespace xlmr::kernels::cuda {
namespace {

// ---- Operands in one dtype ----

Tensor WidenedToF32(const Tensor& t) {
  if (t.dtype() == DType::kF32) return t;
  Tensor wide = Tensor::Empty(t.shape(), DType::kF32, Device::kCuda, MemoryCategory::kWorkspace);
  CastTensor(t, &wide);
  return wide;
}

// The two operands of one GEMM as they are when their dtypes match, otherwise both in f32 (the
// f16|bf16 one widened exactly, which is what the CPU reference computes with).
std::pair<Tensor, Tensor> InCommonDType(const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) return {a, b};
  return {WidenedToF32(a), WidenedToF32(b)};
}

// ---- Small kernels ----

__device__ __forceinline__ float ToFloat(float value) { return value; }
__device__ __forceinline__ float ToFloat(__half value) { return __half2float(value); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 value) { return __bfloat162float(value); }

constexpr int kThreadsPerBlock = 256;

// Column sums of dy [rows, width] in two deterministic passes (no atomics, so the order of the
// fp32 additions never changes). Pass 1: block (x, y) sums the kColumnsPerBlock columns of tile x
// over row chunk y: each of kRowLanes lanes takes every kRowLanes-th row, then lane 0 adds the
// lanes up in order. Pass 2: one thread per column adds the chunks' sums in order into dbias.
constexpr int kColumnsPerBlock = 32;  // one warp across adjacent columns: coalesced loads
constexpr int kRowLanes = 16;

template <typename T>
__global__ void ChunkColumnSumsKernel(const T* __restrict__ dy, int64_t rows, int64_t width,
                                      int64_t rows_per_chunk, float* __restrict__ chunk_sums) {
  __shared__ float lane_sums[kRowLanes][kColumnsPerBlock + 1];  // +1: no bank conflicts
  const int64_t column = static_cast<int64_t>(blockIdx.x) * kColumnsPerBlock + threadIdx.x;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * rows_per_chunk;
  const int64_t end = begin + rows_per_chunk < rows ? begin + rows_per_chunk : rows;
  float sum = 0.0f;
  if (column < width) {
    for (int64_t r = begin + threadIdx.y; r < end; r += kRowLanes) {
      sum += ToFloat(dy[r * width + column]);
    }
  }
  lane_sums[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y != 0 || column >= width) return;
  float total = 0.0f;
  for (int lane = 0; lane < kRowLanes; ++lane) total += lane_sums[lane][threadIdx.x];
  chunk_sums[static_cast<int64_t>(blockIdx.y) * width + column] = total;
}

__global__ void AddChunkSumsKernel(const float* __restrict__ chunk_sums, int64_t chunks,
                                   int64_t width, float* __restrict__ dbias) {
  const int64_t column = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (column >= width) return;
  float total = 0.0f;
  for (int64_t c = 0; c < chunks; ++c) total += chunk_sums[c * width + column];
  dbias[column] += total;
}

// Enough row chunks for about 4 blocks per SM over all column tiles, each chunk giving every
// lane at least one row; at most 65535 (gridDim.y's limit).
int64_t RowChunkCount(int64_t rows, int64_t column_tiles) {
  const int64_t target_blocks =
      4 * static_cast<int64_t>(CudaContext::Current().multiprocessor_count());
  const int64_t wanted = (target_blocks + column_tiles - 1) / column_tiles;
  const int64_t most = (rows + kRowLanes - 1) / kRowLanes;
  return std::max<int64_t>(1, std::min<int64_t>({wanted, most, 65535}));
}

template <typename T>
void LaunchColumnSums(const Tensor& dy, int64_t rows, int64_t width, Tensor* dbias) {
  const int64_t column_tiles = (width + kColumnsPerBlock - 1) / kColumnsPerBlock;
  const int64_t wanted_chunks = RowChunkCount(rows, column_tiles);
  const int64_t rows_per_chunk = (rows + wanted_chunks - 1) / wanted_chunks;
  const int64_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
  // Every (chunk, column) is stored by pass 1 (chunks covers the grid's y exactly).
  Tensor chunk_sums =
      Tensor::Empty({chunks, width}, DType::kF32, Device::kCuda, MemoryCategory::kWorkspace);
  cudaStream_t stream = CudaContext::Current().compute_stream();
  const dim3 grid(static_cast<unsigned>(column_tiles), static_cast<unsigned>(chunks));
  const dim3 block(kColumnsPerBlock, kRowLanes);
  ChunkColumnSumsKernel<T><<<grid, block, 0, stream>>>(
      static_cast<const T*>(dy.raw_data()), rows, width, rows_per_chunk, chunk_sums.data<float>());
  KERNEL_LAUNCH_CHECK();
  const int add_blocks = static_cast<int>((width + kThreadsPerBlock - 1) / kThreadsPerBlock);
  AddChunkSumsKernel<<<add_blocks, kThreadsPerBlock, 0, stream>>>(chunk_sums.data<float>(), chunks,
                                                                  width, dbias->data<float>());
  KERNEL_LAUNCH_CHECK();
}

__global__ void AddIntoKernel(const float* __restrict__ addend, int64_t count, float* __restrict__ sum) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) sum[i] += addend[i];
}

// dbias [width] += column sums of dy viewed as [rows, width].
void AccumulateColumnSums(const Tensor& dy, int64_t rows, int64_t width, Tensor* dbias) {
  if (rows == 0 || width == 0) return;
  if (dy.dtype() == DType::kF16) return LaunchColumnSums<__half>(dy, rows, width, dbias);
  if (dy.dtype() == DType::kBF16) return LaunchColumnSums<__nv_bfloat16>(dy, rows, width, dbias);
  LaunchColumnSums<float>(dy, rows, width, dbias);
}

Shape WithLastDim(const Shape& shape, int64_t last) {
  Shape result = shape;
  result.back() = last;
  return result;
}

// dweight[out, in] += dy[rows, out]^T * x[rows, in] (beta = 1) and, when dbias is given, dbias +=
// dy's column sums: from the product's own epilogue where cuBLASLt has one (the sums come out of
// the tiles the product already loads, instead of a second pass over dy), else separately.
void AccumulateWeightGradient(const Tensor& dy, const Tensor& x, Tensor* dweight, Tensor* dbias) {
  const auto [dy_mm, x_mm] = InCommonDType(dy, x);
  const int64_t out = dweight->dim(0);
  if (dbias != nullptr) {
    // Written whole by the product, so never read uninitialised.
    Tensor sums = Tensor::Empty({out}, DType::kF32, Device::kCuda, MemoryCategory::kWorkspace);
    if (GemmWithRowSumsOfA(dy_mm, Transpose::kYes, x_mm, Transpose::kNo, 1.0f, 1.0f, dweight, &sums)) {
      const int blocks = static_cast<int>((out + kThreadsPerBlock - 1) / kThreadsPerBlock);
      AddIntoKernel<<<blocks, kThreadsPerBlock, 0, CudaContext::Current().compute_stream()>>>(
          sums.data<float>(), out, dbias->data<float>());
      KERNEL_LAUNCH_CHECK();
      return;
    }
  }
  Gemm(dy_mm, Transpose::kYes, x_mm, Transpose::kNo, Tensor(), 1.0f, 1.0f, dweight);
  if (dbias != nullptr) AccumulateColumnSums(dy, x.numel() / x.dim(-1), out, dbias);
}

}  // namespace

Tensor LinearForward(const Tensor& x, const Tensor& weight, const Tensor& bias, DType out_dtype) {
  const int64_t in = weight.dim(1);
  const int64_t out = weight.dim(0);
  // Written whole by the GEMM (beta = 0), which aborts rather than skip a non-empty y (K >= 1).
  Tensor y = Tensor::Empty(WithLastDim(x.shape(), out), out_dtype, Device::kCuda,
                           MemoryCategory::kActivations);
  if (y.numel() == 0) return y;
  const auto [x_mm, weight_mm] = InCommonDType(x, weight);
  // y[rows, out] = x[rows, in] * weight[out, in]^T + bias.
  Gemm(x_mm, Transpose::kNo, weight_mm, Transpose::kYes, bias, 1.0f, 0.0f, &y);
  return y;
}

Tensor LinearBackward(const Tensor& dy, const Tensor& x, const Tensor& weight, Tensor* dweight,
                      Tensor* dbias, DType dx_dtype) {
  const int64_t in = weight.dim(1);
  const int64_t out = weight.dim(0);
  const int64_t rows = x.numel() / in;  // in >= 1, as on the CPU
  // The dx GEMM below (beta = 0) writes every element of a non-empty dx, except with out == 0:
  // then it is skipped, and dx, a sum over no terms, must be zeros.
  Tensor dx =
      out > 0 ? Tensor::Empty(x.shape(), dx_dtype, Device::kCuda, MemoryCategory::kActivations)
              : Tensor::Zeros(x.shape(), dx_dtype, Device::kCuda, MemoryCategory::kActivations);
  if (rows > 0 && out > 0 && in > 0) {
    const Tensor no_bias;
    const auto [dy_for_dx, weight_mm] = InCommonDType(dy, weight);
    // dx[rows, in] = dy[rows, out] * weight[out, in].
    Gemm(dy_for_dx, Transpose::kNo, weight_mm, Transpose::kNo, no_bias, 1.0f, 0.0f, &dx);
    AccumulateWeightGradient(dy, x, dweight, dbias);
  } else if (dbias != nullptr) {
    AccumulateColumnSums(dy, rows, out, dbias);
  }
  return dx;
}

}  // namespace xlmr::kernels::cuda
