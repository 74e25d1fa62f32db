#include "kernels/cuda/layer_norm.h"

#include "framework/core/check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/float_access.cuh"

namespace xlmr::kernels::cuda {
namespace {

// Row kernels: one warp per row, kWarpsPerBlock rows per block. A row's lanes stride over its
// H elements (coalesced) and combine their partial sums with warp shuffles.
constexpr int kWarpSize = 32;
constexpr int kWarpsPerBlock = 8;

// Sum over the 32 lanes, returned to every lane. All lanes must be active.
__device__ __forceinline__ float WarpSum(float value) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  }
  return value;
}

// The row this warp handles; >= rows for the idle warps of the last block. Uniform across the
// warp, so a warp either returns as a whole or keeps all 32 lanes for WarpSum.
__device__ __forceinline__ int64_t WarpRow() {
  return static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize;
}

// Two passes over the row (mean, then squared deviations from it) as torch does, so a large
// mean does not cancel the variance; the third pass writes y in the CPU's order of operations,
// without fused multiply-adds.
__global__ void LayerNormForwardKernel(FloatsIn x, const float* __restrict__ gamma,
                                       const float* __restrict__ beta, float eps, int64_t rows,
                                       int64_t width, FloatsOut y, float* __restrict__ mean_out,
                                       float* __restrict__ rstd_out) {
  const int64_t row = WarpRow();
  if (row >= rows) return;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t base = row * width;
  float sum = 0.0f;
  for (int64_t j = lane; j < width; j += kWarpSize) sum += x[base + j];
  const float mean = WarpSum(sum) / static_cast<float>(width);
  float squares = 0.0f;
  for (int64_t j = lane; j < width; j += kWarpSize) {
    const float deviation = x[base + j] - mean;
    squares += deviation * deviation;
  }
  const float variance = WarpSum(squares) / static_cast<float>(width);
  const float rstd = 1.0f / sqrtf(variance + eps);  // IEEE division and sqrt (no fast math)
  for (int64_t j = lane; j < width; j += kWarpSize) {
    const float xhat = __fmul_rn(__fsub_rn(x[base + j], mean), rstd);
    y.Store(base + j, __fadd_rn(__fmul_rn(xhat, gamma[j]), beta[j]));
  }
  if (lane == 0) {
    mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
}

// dx of one row per warp: the two row means of g = dy * gamma and g * xhat, then dx.
__global__ void LayerNormInputGradKernel(FloatsIn dy, FloatsIn x, const float* __restrict__ gamma,
                                         const float* __restrict__ mean,
                                         const float* __restrict__ rstd, int64_t rows,
                                         int64_t width, FloatsOut dx) {
  const int64_t row = WarpRow();
  if (row >= rows) return;
  const int lane = threadIdx.x % kWarpSize;
  const int64_t base = row * width;
  const float row_mean = mean[row];
  const float row_rstd = rstd[row];
  float grad_sum = 0.0f, grad_xhat_sum = 0.0f;
  for (int64_t j = lane; j < width; j += kWarpSize) {
    const float xhat = __fmul_rn(__fsub_rn(x[base + j], row_mean), row_rstd);
    const float grad = __fmul_rn(dy[base + j], gamma[j]);
    grad_sum += grad;
    grad_xhat_sum += grad * xhat;
  }
  const float grad_mean = WarpSum(grad_sum) / static_cast<float>(width);
  const float grad_xhat_mean = WarpSum(grad_xhat_sum) / static_cast<float>(width);
  for (int64_t j = lane; j < width; j += kWarpSize) {
    const float xhat = __fmul_rn(__fsub_rn(x[base + j], row_mean), row_rstd);
    const float grad = __fmul_rn(dy[base + j], gamma[j]);
    const float centred = __fsub_rn(__fsub_rn(grad, grad_mean), __fmul_rn(xhat, grad_xhat_mean));
    dx.Store(base + j, __fmul_rn(row_rstd, centred));
  }
}

// Stage 1 of dgamma/dbeta: block (column tile blockIdx.y, row chunk blockIdx.x) sums dy * xhat
// and dy over its chunk's rows for kTileColumns columns. Thread (tx, ty) takes column tx (so a
// warp reads 32 consecutive elements of a row) and every kTileRows-th row; the kTileRows partials
// are then added in ty order. partial_* are [chunks, width].
constexpr int kTileColumns = 32;
constexpr int kTileRows = 8;

__global__ void LayerNormParamGradPartialsKernel(FloatsIn dy, FloatsIn x,
                                                 const float* __restrict__ mean,
                                                 const float* __restrict__ rstd, int64_t rows,
                                                 int64_t width, float* __restrict__ partial_dgamma,
                                                 float* __restrict__ partial_dbeta) {
  __shared__ float dgamma_tile[kTileRows][kTileColumns];
  __shared__ float dbeta_tile[kTileRows][kTileColumns];
  const int64_t column = static_cast<int64_t>(blockIdx.y) * kTileColumns + threadIdx.x;
  const int64_t chunk = blockIdx.x;
  const int64_t row_begin = chunk * kLayerNormRowsPerChunk;
  const int64_t row_end = min(rows, row_begin + kLayerNormRowsPerChunk);
  float dgamma = 0.0f, dbeta = 0.0f;
  if (column < width) {
    for (int64_t row = row_begin + threadIdx.y; row < row_end; row += kTileRows) {
      const float grad = dy[row * width + column];
      const float xhat = __fmul_rn(__fsub_rn(x[row * width + column], mean[row]), rstd[row]);
      dgamma += grad * xhat;
      dbeta += grad;
    }
  }
  dgamma_tile[threadIdx.y][threadIdx.x] = dgamma;
  dbeta_tile[threadIdx.y][threadIdx.x] = dbeta;
  __syncthreads();
  if (threadIdx.y != 0 || column >= width) return;
  for (int k = 1; k < kTileRows; ++k) {
    dgamma += dgamma_tile[k][threadIdx.x];
    dbeta += dbeta_tile[k][threadIdx.x];
  }
  partial_dgamma[chunk * width + column] = dgamma;
  partial_dbeta[chunk * width + column] = dbeta;
}

// Stage 2: for each column, the chunk partials in chunk order, added to the gradients (+=).
__global__ void LayerNormParamGradReduceKernel(const float* __restrict__ partial_dgamma,
                                               const float* __restrict__ partial_dbeta,
                                               int64_t chunks, int64_t width,
                                               float* __restrict__ dgamma,
                                               float* __restrict__ dbeta) {
  for (int64_t column = GridStrideBegin(); column < width; column += GridStride()) {
    float dgamma_sum = 0.0f, dbeta_sum = 0.0f;
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      dgamma_sum += partial_dgamma[chunk * width + column];
      dbeta_sum += partial_dbeta[chunk * width + column];
    }
    dgamma[column] += dgamma_sum;
    dbeta[column] += dbeta_sum;
  }
}

// An f32 CUDA tensor of `shape` (gamma, beta, the statistics and the parameter gradients).
const float* F32Data(const Tensor& t, const char* what, const Shape& shape) {
  XLMR_CHECK(t.device() == Device::kCuda && t.dtype() == DType::kF32 && t.shape() == shape)
      << what << " must be an f32 CUDA tensor of shape " << ShapeString(shape) << ", is "
      << DTypeName(t.dtype()) << " " << ShapeString(t.shape()) << " on " << DeviceName(t.device());
  return static_cast<const float*>(t.raw_data());
}

int RowBlocks(int64_t rows) {
  return static_cast<int>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
}

}  // namespace

void LayerNormAccumulateParamGrads(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                   int64_t rows, int64_t width, Tensor* dgamma, Tensor* dbeta) {
  const int64_t chunks = (rows + kLayerNormRowsPerChunk - 1) / kLayerNormRowsPerChunk;
  // Freed on return while the kernels may still run: safe, because CudaAllocator frees in
  // compute-stream order. Empty: the partials kernel stores every (chunk, column) of both halves.
  const Tensor partials =
      Tensor::Empty({2, chunks, width}, DType::kF32, Device::kCuda, MemoryCategory::kWorkspace);
  float* partial_dgamma = partials.data<float>();
  float* partial_dbeta = partial_dgamma + chunks * width;
  const dim3 grid(static_cast<unsigned>(chunks),
                  static_cast<unsigned>((width + kTileColumns - 1) / kTileColumns));
  LayerNormParamGradPartialsKernel<<<grid, dim3(kTileColumns, kTileRows), 0, ComputeStream()>>>(
      ReadFloats(dy, "LayerNormBackward dy"), ReadFloats(x, "LayerNormBackward x"),
      mean.data<float>(), rstd.data<float>(), rows, width, partial_dgamma, partial_dbeta);
  KERNEL_LAUNCH_CHECK() << "(LayerNorm parameter-gradient partials)";
  LayerNormParamGradReduceKernel<<<GridStrideBlocks(width), kThreadsPerBlock, 0,
                                   ComputeStream()>>>(partial_dgamma, partial_dbeta, chunks, width,
                                                      dgamma->data<float>(),
                                                      dbeta->data<float>());
  KERNEL_LAUNCH_CHECK() << "(LayerNorm parameter-gradient reduction)";
}

void LayerNormForward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                      DType out_dtype, Tensor* y, Tensor* mean, Tensor* rstd) {
  const int64_t width = gamma.numel();
  const int64_t rows = width == 0 ? 0 : x.numel() / width;
  XLMR_CHECK(x.rank() >= 1 && x.dim(-1) == width) << "cuda::LayerNormForward: x "
                                                  << ShapeString(x.shape()) << ", H " << width;
  const float* gamma_data = F32Data(gamma, "cuda::LayerNormForward gamma", {width});
  const float* beta_data = F32Data(beta, "cuda::LayerNormForward beta", {width});
  // One warp per row writes all of the row's y, its mean and its rstd.
  *y = Tensor::Empty(x.shape(), out_dtype, Device::kCuda, MemoryCategory::kActivations);
  *mean = Tensor::Empty({rows}, DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  *rstd = Tensor::Empty({rows}, DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  if (rows == 0) return;
  LayerNormForwardKernel<<<RowBlocks(rows), kWarpsPerBlock * kWarpSize, 0, ComputeStream()>>>(
      ReadFloats(x, "cuda::LayerNormForward x"), gamma_data, beta_data, eps, rows, width,
      WriteFloats(*y, "cuda::LayerNormForward y"), mean->data<float>(), rstd->data<float>());
  KERNEL_LAUNCH_CHECK();
}

Tensor LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, Tensor* dgamma, Tensor* dbeta) {
  const int64_t width = gamma.numel();
  const int64_t rows = width == 0 ? 0 : x.numel() / width;
  XLMR_CHECK(x.rank() >= 1 && x.dim(-1) == width && dy.shape() == x.shape())
      << "cuda::LayerNormBackward: x " << ShapeString(x.shape()) << ", dy "
      << ShapeString(dy.shape()) << ", H " << width;
  const float* gamma_data = F32Data(gamma, "cuda::LayerNormBackward gamma", {width});
  F32Data(mean, "cuda::LayerNormBackward mean", {rows});
  F32Data(rstd, "cuda::LayerNormBackward rstd", {rows});
  F32Data(*dgamma, "cuda::LayerNormBackward dgamma", {width});
  F32Data(*dbeta, "cuda::LayerNormBackward dbeta", {width});
  Tensor dx = Tensor::Empty(x.shape(), x.dtype(), Device::kCuda, MemoryCategory::kActivations);
  if (rows == 0) return dx;
  LayerNormInputGradKernel<<<RowBlocks(rows), kWarpsPerBlock * kWarpSize, 0, ComputeStream()>>>(
      ReadFloats(dy, "cuda::LayerNormBackward dy"), ReadFloats(x, "cuda::LayerNormBackward x"),
      gamma_data, mean.data<float>(), rstd.data<float>(), rows, width,
      WriteFloats(dx, "cuda::LayerNormBackward dx"));
  KERNEL_LAUNCH_CHECK() << "(LayerNorm input gradient)";
  LayerNormAccumulateParamGrads(dy, x, mean, rstd, rows, width, dgamma, dbeta);
  return dx;
}

}  // namespace xlmr::kernels::cuda
