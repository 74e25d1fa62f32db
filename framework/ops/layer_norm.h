// Layer normalisation over the last dimension, torch.nn.LayerNorm semantics: biased variance
// (divide by H), eps inside the square root, statistics in fp32.
//
// Gradient convention: parameter gradients (dgamma, dbeta) are ACCUMULATED (+=) into the fp32
// tensors the caller passes; the input gradient dx is RETURNED as a new kActivations tensor.
#ifndef XLMR_FRAMEWORK_OPS_LAYER_NORM_H_
#define XLMR_FRAMEWORK_OPS_LAYER_NORM_H_

#include "framework/tensor/tensor.h"

namespace xlmr::ops {

struct LayerNormOutput {
  Tensor y;     // [..., H] out_dtype: (x - mean) * rstd * gamma + beta, rounded once
  Tensor mean;  // [rows] f32, rows = numel(x) / H: saved for the backward
  Tensor rstd;  // [rows] f32: 1 / sqrt(biased variance + eps), saved for the backward
};

// [in] x [..., H] f32|f16|bf16 (rank >= 1); gamma, beta [H] f32. out_dtype f32|f16|bf16.
LayerNormOutput LayerNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                          DType out_dtype);

// Backward needs x, gamma and the forward's mean and rstd (not y).
// [in] dy [..., H] f32|f16|bf16 (x's shape). [in,out] dgamma, dbeta [H] f32 (+=).
// Returns dx of x's shape and dtype.
Tensor LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, Tensor* dgamma, Tensor* dbeta);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_LAYER_NORM_H_
