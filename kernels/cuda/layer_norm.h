// CUDA kernels of layer normalisation over the last dimension (framework/ops/layer_norm.h,
// torch.nn.LayerNorm semantics). Plain C++ header; the kernels are in layer_norm.cu.
//
// Same contract as kernels/cpu/layer_norm.h. Statistics and all arithmetic are fp32 (the CPU
// reference sums in double, so results agree to fp32 rounding, not bit for bit). Gradient
// convention: dgamma and dbeta are ACCUMULATED (+=); dx is RETURNED (new tensor).
// Deterministic: the parameter gradients are reduced in a fixed order (per-chunk partial sums
// over kLayerNormRowsPerChunk rows, then the chunks in order), with no atomics, so the same
// inputs give the same bits on every run and every GPU.
// Asynchronous: queued on CudaContext::Current().compute_stream().
#ifndef XLMR_KERNELS_CUDA_LAYER_NORM_H_
#define XLMR_KERNELS_CUDA_LAYER_NORM_H_

#include <cstdint>

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// Rows per partial sum of dgamma/dbeta in the backward (fixed, so the summation order and hence
// the result do not depend on the GPU).
inline constexpr int64_t kLayerNormRowsPerChunk = 128;

// [in] x [rows..., H] f32|f16|bf16; gamma, beta [H] f32; all CUDA; eps > 0; out_dtype f32|f16|bf16.
// [out] y [rows..., H] of out_dtype: (x - mean) * rstd * gamma + beta, rounded once;
//       mean, rstd [rows] f32 (1 / sqrt(biased variance + eps)). New kActivations tensors,
//       assigned to *y, *mean, *rstd.
void LayerNormForward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                      DType out_dtype, Tensor* y, Tensor* mean, Tensor* rstd);

// [in] dy, x [rows..., H] f32|f16|bf16 (same shape); gamma [H] f32; mean, rstd [rows] f32 from the
// forward; all CUDA. [in,out] dgamma, dbeta [H] f32 CUDA: += sum over rows of dy * xhat and dy.
// Returns dx [rows..., H] of x's dtype: rstd * (g - mean_j(g) - xhat * mean_j(g * xhat)),
// g = dy * gamma. Uses 2 * ceil(rows / kLayerNormRowsPerChunk) * H floats of kWorkspace memory.
Tensor LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, Tensor* dgamma, Tensor* dbeta);

// LayerNormBackward's dgamma and dbeta alone (its second and third kernels), for a fused
// backward that forms dx itself (kernels/cuda/residual_layer_norm.h): dy, x [rows, H] as there,
// rows > 0, H = width; the parameter gradients checked by the caller.
void LayerNormAccumulateParamGrads(const Tensor& dy, const Tensor& x, const Tensor& mean, const Tensor& rstd,
                                   int64_t rows, int64_t width, Tensor* dgamma, Tensor* dbeta);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_LAYER_NORM_H_
