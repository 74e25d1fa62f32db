// A residual site of the encoder in one op: LayerNorm(DropoutRows(x) + residual), the sum kept
// for the backward, and optionally the output's half copy that the next matrix product reads
// (HF's `LayerNorm(dropout(dense(h)) + input)`, RobertaSelfOutput and RobertaOutput).
//
// The CPU runs the ops it composes (ops::DropoutRows, ops::Add in f32, ops::LayerNorm in f32,
// ops::Cast; backward: ops::LayerNormBackward, ops::Cast, ops::DropoutRowsBackward), so its bits
// are theirs. CUDA runs one kernel per row (kernels/cuda/residual_layer_norm.h) where the width
// allows (a multiple of 4), else the same composition: the same mask and the same sum;
// LayerNorm's fp32 reductions in the kernel's own order.
#ifndef XLMR_FRAMEWORK_OPS_RESIDUAL_LAYER_NORM_H_
#define XLMR_FRAMEWORK_OPS_RESIDUAL_LAYER_NORM_H_

#include <cstdint>

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::ops {

struct ResidualLayerNormOutput {
  Tensor sum;     // [..., H] f32: DropoutRows(x) + residual (the LayerNorm backward's input)
  Tensor y;       // [..., H] f32: LayerNorm(sum)
  Tensor y_half;  // y rounded once to half_dtype, or undefined when half_dtype is f32
  Tensor mean;    // [rows] f32
  Tensor rstd;    // [rows] f32
};

// [in] x [..., H] f32|f16|bf16 and residual f32 of x's shape; p, key, row_slots, num_slots as
//      ops::DropoutRows (rows = numel / H); gamma, beta [H] f32; eps > 0; half_dtype f16|bf16,
//      or f32 for no half copy.
ResidualLayerNormOutput DropoutAddLayerNorm(const Tensor& x, const Tensor& residual, float p, const DropoutKey& key,
                                            const Tensor& row_slots, int64_t num_slots, const Tensor& gamma,
                                            const Tensor& beta, float eps, DType half_dtype);

struct ResidualLayerNormGrads {
  Tensor d_sum;  // [..., H] f32: LayerNorm's input gradient, the residual's gradient
  Tensor d_x;    // [..., H] x_dtype: DropoutRowsBackward of d_sum rounded to x_dtype
};

// The site's backward from the forward's saved sum, mean and rstd (same p, key, slots).
// [in] dy [..., H] f32 of the sum's shape; gamma [H] f32; x_dtype the forward's x dtype.
// [in,out] dgamma, dbeta [H] f32: += as ops::LayerNormBackward adds.
ResidualLayerNormGrads DropoutAddLayerNormBackward(const Tensor& dy, const Tensor& sum, const Tensor& mean,
                                                   const Tensor& rstd, const Tensor& gamma, float p,
                                                   const DropoutKey& key, const Tensor& row_slots, int64_t num_slots,
                                                   DType x_dtype, Tensor* dgamma, Tensor* dbeta);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_RESIDUAL_LAYER_NORM_H_
