#include "kernels/cuda/residual_layer_norm.h"

#include "framework/core/check.h"
#include "kernels/common/dropout_scale.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/float_access.cuh"
#include "kernels/cuda/layer_norm.h"
#include "kernels/cuda/philox_device.cuh"

namespace xlmr::kernels::cuda {
namespace {

// One warp per row (as layer_norm.cu's row kernels); each lane takes four consecutive elements
// at a time (one Philox block), 128 elements per round of the warp.
constexpr int kWarpSize = 32;
constexpr int kWarpsPerBlock = 8;
constexpr int kElementsPerLane = 4;

__device__ __forceinline__ float WarpSum(float value) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}

// `value` rounded once to the storage's dtype, read back as float (DropoutRows's stored value).
__device__ __forceinline__ float RoundedTo(FloatStorage storage, float value) {
  switch (storage) {
    case FloatStorage::kF16: return __half2float(__float2half_rn(value));
    case FloatStorage::kBF16: return __bfloat162float(__float2bfloat16_rn(value));
    default: return value;
  }
}

// Whether each of four consecutive mask elements is kept.
struct KeepMask {
  bool kept[kElementsPerLane];
};

struct SiteDropout {
  float p;  // 0: none
  float scale;
  DropoutSite site;
  const int32_t* row_slots;

  // Mask elements index .. index + 3 (index a multiple of 4: one Philox block); all kept when p is 0.
  __device__ __forceinline__ KeepMask MaskAt(int64_t index) const {
    KeepMask mask{{true, true, true, true}};
    if (p > 0.0f) {
      const uint4 words = DropoutBlockWords(site, static_cast<uint32_t>(index / 4));
      const uint32_t word[4] = {words.x, words.y, words.z, words.w};
#pragma unroll
      for (int k = 0; k < kElementsPerLane; ++k) mask.kept[k] = UniformFromWordDevice(word[k]) >= p;
    }
    return mask;
  }
};

// Pass 1 writes sum = dropout(x) + residual and adds it up; pass 2 the squared deviations from
// the mean (two passes, as torch and layer_norm.cu, so a large mean does not cancel the
// variance); pass 3 writes y (and its half copy) in the CPU's order of operations, without fused
// multiply-adds. Passes 2 and 3 read back the sums this lane wrote.
__global__ void ResidualLayerNormKernel(FloatsIn x, const float* __restrict__ residual, SiteDropout dropout,
                                        const float* __restrict__ gamma, const float* __restrict__ beta,
                                        float eps, int64_t rows, int64_t width, float* __restrict__ sum_out,
                                        float* __restrict__ y_out, FloatsOut y_half, bool write_half,
                                        float* __restrict__ mean_out, float* __restrict__ rstd_out) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize;
  if (row >= rows) return;  // uniform across the warp
  const int lane = threadIdx.x % kWarpSize;
  const int64_t base = row * width;
  const int64_t slot_base = dropout.p > 0.0f ? int64_t{dropout.row_slots[row]} * width : 0;
  float total = 0.0f;
  for (int64_t j = int64_t{lane} * kElementsPerLane; j < width; j += kWarpSize * kElementsPerLane) {
    const KeepMask keep = dropout.MaskAt(slot_base + j);
#pragma unroll
    for (int k = 0; k < kElementsPerLane; ++k) {
      float value = x[base + j + k];
      if (dropout.p > 0.0f) value = keep.kept[k] ? RoundedTo(x.storage, __fmul_rn(value, dropout.scale)) : 0.0f;
      const float sum = __fadd_rn(value, residual[base + j + k]);
      sum_out[base + j + k] = sum;
      total += sum;
    }
  }
  const float mean = WarpSum(total) / static_cast<float>(width);
  float squares = 0.0f;
  for (int64_t j = int64_t{lane} * kElementsPerLane; j < width; j += kWarpSize * kElementsPerLane) {
#pragma unroll
    for (int k = 0; k < kElementsPerLane; ++k) {
      const float deviation = sum_out[base + j + k] - mean;
      squares += deviation * deviation;
    }
  }
  const float variance = WarpSum(squares) / static_cast<float>(width);
  const float rstd = 1.0f / sqrtf(variance + eps);  // IEEE division and sqrt (no fast math)
  for (int64_t j = int64_t{lane} * kElementsPerLane; j < width; j += kWarpSize * kElementsPerLane) {
#pragma unroll
    for (int k = 0; k < kElementsPerLane; ++k) {
      const int64_t i = base + j + k;
      const float xhat = __fmul_rn(__fsub_rn(sum_out[i], mean), rstd);
      const float y = __fadd_rn(__fmul_rn(xhat, gamma[j + k]), beta[j + k]);
      y_out[i] = y;
      if (write_half) y_half.Store(i, y);
    }
  }
  if (lane == 0) {
    mean_out[row] = mean;
    rstd_out[row] = rstd;
  }
}

// LayerNorm's input gradient of one row per warp (layer_norm.cu's formula: the row means of
// g = dy * gamma and g * xhat, then rstd * (g - mean(g) - xhat * mean(g * xhat))), written in
// f32, and its dropout backward: the value rounded to the projection's dtype (the cast the
// composition makes), then kept and scaled as DropoutRows scales, rounded again.
__global__ void ResidualLayerNormBackwardKernel(const float* __restrict__ dy, const float* __restrict__ sum,
                                                const float* __restrict__ mean, const float* __restrict__ rstd,
                                                const float* __restrict__ gamma, SiteDropout dropout, int64_t rows,
                                                int64_t width, float* __restrict__ d_sum_out, FloatsOut d_x) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / kWarpSize;
  if (row >= rows) return;  // uniform across the warp
  const int lane = threadIdx.x % kWarpSize;
  const int64_t base = row * width;
  const float row_mean = mean[row], row_rstd = rstd[row];
  float grad_sum = 0.0f, grad_xhat_sum = 0.0f;
  for (int64_t j = int64_t{lane} * kElementsPerLane; j < width; j += kWarpSize * kElementsPerLane) {
#pragma unroll
    for (int k = 0; k < kElementsPerLane; ++k) {
      const float xhat = __fmul_rn(__fsub_rn(sum[base + j + k], row_mean), row_rstd);
      const float grad = __fmul_rn(dy[base + j + k], gamma[j + k]);
      grad_sum += grad;
      grad_xhat_sum += grad * xhat;
    }
  }
  const float grad_mean = WarpSum(grad_sum) / static_cast<float>(width);
  const float grad_xhat_mean = WarpSum(grad_xhat_sum) / static_cast<float>(width);
  const int64_t slot_base = dropout.p > 0.0f ? int64_t{dropout.row_slots[row]} * width : 0;
  for (int64_t j = int64_t{lane} * kElementsPerLane; j < width; j += kWarpSize * kElementsPerLane) {
    const KeepMask keep = dropout.MaskAt(slot_base + j);
#pragma unroll
    for (int k = 0; k < kElementsPerLane; ++k) {
      const int64_t i = base + j + k;
      const float xhat = __fmul_rn(__fsub_rn(sum[i], row_mean), row_rstd);
      const float grad = __fmul_rn(dy[i], gamma[j + k]);
      const float centred = __fsub_rn(__fsub_rn(grad, grad_mean), __fmul_rn(xhat, grad_xhat_mean));
      const float dx = __fmul_rn(row_rstd, centred);
      d_sum_out[i] = dx;
      float projected = RoundedTo(d_x.storage, dx);
      if (dropout.p > 0.0f) projected = keep.kept[k] ? __fmul_rn(projected, dropout.scale) : 0.0f;
      d_x.Store(i, projected);
    }
  }
}

SiteDropout SiteDropoutOf(float p, const DropoutKey& key, const Tensor& row_slots) {
  return {p, p > 0.0f ? DropoutScale(p) : 1.0f, p > 0.0f ? DropoutSiteOf(key) : DropoutSite{},
          p > 0.0f ? row_slots.data<int32_t>() : nullptr};
}

void CheckSite(const char* op, int64_t rows, int64_t width, float p, const Tensor& row_slots, int64_t num_slots) {
  XLMR_CHECK(ResidualLayerNormFuses(width)) << op << ": width " << width << " is not a multiple of 4";
  XLMR_CHECK(p >= 0.0f && p < 1.0f) << op << ": p must be in [0, 1), is " << p;
  XLMR_CHECK(p == 0.0f || (row_slots.dtype() == DType::kI32 && row_slots.numel() == rows &&
                           num_slots * width <= kMaxDropoutElements))
      << op << ": row_slots must be i32 [rows], their masks within the dropout counter range";
}

}  // namespace

bool ResidualLayerNormFuses(int64_t width) { return width > 0 && width % kElementsPerLane == 0; }

void ResidualLayerNormForward(const Tensor& x, const Tensor& residual, float p, const DropoutKey& key,
                              const Tensor& row_slots, int64_t num_slots, const Tensor& gamma, const Tensor& beta,
                              float eps, DType half_dtype, Tensor* sum, Tensor* y, Tensor* y_half, Tensor* mean,
                              Tensor* rstd) {
  constexpr const char* kOp = "cuda::ResidualLayerNormForward";
  XLMR_CHECK(x.rank() == 2) << kOp << ": x must be [rows, H]";
  const int64_t rows = x.dim(0), width = x.dim(1);
  CheckSite(kOp, rows, width, p, row_slots, num_slots);
  XLMR_CHECK(residual.dtype() == DType::kF32 && residual.shape() == x.shape()) << kOp << ": residual must be f32 like x";
  *sum = Tensor::Empty(x.shape(), DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  *y = Tensor::Empty(x.shape(), DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  const bool write_half = half_dtype != DType::kF32;
  *y_half = write_half ? Tensor::Empty(x.shape(), half_dtype, Device::kCuda, MemoryCategory::kActivations) : Tensor();
  *mean = Tensor::Empty({rows}, DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  *rstd = Tensor::Empty({rows}, DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  if (rows == 0) return;
  const SiteDropout dropout = SiteDropoutOf(p, key, row_slots);
  const FloatsOut half_out = write_half ? WriteFloats(*y_half, "cuda::ResidualLayerNormForward y_half")
                                        : FloatsOut{nullptr, FloatStorage::kF32};
  const int blocks = static_cast<int>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  ResidualLayerNormKernel<<<blocks, kWarpsPerBlock * kWarpSize, 0, ComputeStream()>>>(
      ReadFloats(x, "cuda::ResidualLayerNormForward x"), residual.data<float>(), dropout, gamma.data<float>(),
      beta.data<float>(), eps, rows, width, sum->data<float>(), y->data<float>(), half_out, write_half,
      mean->data<float>(), rstd->data<float>());
  KERNEL_LAUNCH_CHECK();
}

void ResidualLayerNormBackward(const Tensor& dy, const Tensor& sum, const Tensor& mean, const Tensor& rstd,
                               const Tensor& gamma, float p, const DropoutKey& key, const Tensor& row_slots,
                               int64_t num_slots, DType x_dtype, Tensor* dgamma, Tensor* dbeta, Tensor* d_sum,
                               Tensor* d_x) {
  constexpr const char* kOp = "cuda::ResidualLayerNormBackward";
  XLMR_CHECK(sum.rank() == 2 && sum.dtype() == DType::kF32 && dy.dtype() == DType::kF32 && dy.shape() == sum.shape())
      << kOp << ": dy and sum must be f32 [rows, H]";
  const int64_t rows = sum.dim(0), width = sum.dim(1);
  CheckSite(kOp, rows, width, p, row_slots, num_slots);
  *d_sum = Tensor::Empty(sum.shape(), DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  *d_x = Tensor::Empty(sum.shape(), x_dtype, Device::kCuda, MemoryCategory::kActivations);
  if (rows == 0) return;
  const int blocks = static_cast<int>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  ResidualLayerNormBackwardKernel<<<blocks, kWarpsPerBlock * kWarpSize, 0, ComputeStream()>>>(
      dy.data<float>(), sum.data<float>(), mean.data<float>(), rstd.data<float>(), gamma.data<float>(),
      SiteDropoutOf(p, key, row_slots), rows, width, d_sum->data<float>(),
      WriteFloats(*d_x, "cuda::ResidualLayerNormBackward d_x"));
  KERNEL_LAUNCH_CHECK();
  LayerNormAccumulateParamGrads(dy, sum, mean, rstd, rows, width, dgamma, dbeta);
}

}  // namespace xlmr::kernels::cuda
