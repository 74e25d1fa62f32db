// CPU kernels of layer normalisation over the last dimension (torch.nn.LayerNorm semantics).
//
// Called through ops::LayerNorm / ops::LayerNormBackward (framework/ops/layer_norm.h), which
// check shapes and dtypes. Gradient convention: dgamma and dbeta are ACCUMULATED (+=); dx is
// RETURNED (new tensor).
#ifndef XLMR_KERNELS_CPU_LAYER_NORM_H_
#define XLMR_KERNELS_CPU_LAYER_NORM_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// [in] x [rows..., H] f32|f16|bf16; gamma, beta [H] f32.
// [out] y [rows..., H] of out_dtype; mean, rstd [rows] f32 (new tensors, assigned).
void LayerNormForward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                      DType out_dtype, Tensor* y, Tensor* mean, Tensor* rstd);

// [in] dy, x [rows..., H] f32|f16|bf16; gamma [H] f32; mean, rstd [rows] f32 from the forward.
// [in,out] dgamma, dbeta [H] f32 (+=). Returns dx [rows..., H] of x's dtype.
Tensor LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, Tensor* dgamma, Tensor* dbeta);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_LAYER_NORM_H_
