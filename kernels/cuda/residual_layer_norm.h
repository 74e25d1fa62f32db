// One CUDA kernel for a residual site of the encoder (framework/ops/residual_layer_norm.h):
// row-placed dropout of a projection, the residual add and LayerNorm, with the statistics and an
// optional half copy of the output, in one pass over the rows instead of four kernels (dropout,
// add, LayerNorm, cast). Plain C++ header; the kernel is in residual_layer_norm.cu.
//
// The dropout mask is DropoutRows's (kernels/cuda/dropout.h: the same Philox words, one call per
// four elements) and the dropped value is rounded to x's dtype as DropoutRows rounds it; the sum
// is one fp32 addition. LayerNorm's statistics are fp32 sums in a warp's order (not the CPU's
// double sums): the result agrees with the CPU composition to fp32 rounding of the statistics,
// as kernels/cuda/layer_norm.h's does. Asynchronous: queued on the compute stream.
#ifndef XLMR_KERNELS_CUDA_RESIDUAL_LAYER_NORM_H_
#define XLMR_KERNELS_CUDA_RESIDUAL_LAYER_NORM_H_

#include <cstdint>

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// Whether the fused kernel takes rows of `width` (a multiple of 4: a row's mask starts on a
// Philox block).
bool ResidualLayerNormFuses(int64_t width);

// [in] x [rows, H] f32|f16|bf16; residual [rows, H] f32; row_slots i32 [rows] (each in
//      [0, num_slots), the caller's promise), num_slots * H <= kMaxDropoutElements; 0 <= p < 1
//      (0: no dropout, x as it is); gamma, beta [H] f32; eps > 0; H with
//      ResidualLayerNormFuses; half_dtype f16|bf16 for a half copy of y, or f32 for none.
// [out] sum [rows, H] f32 = dropout(x) + residual; y [rows, H] f32 = LayerNorm(sum);
//       y_half [rows, H] half_dtype (undefined for f32); mean, rstd [rows] f32. New kActivations
//       tensors.
void ResidualLayerNormForward(const Tensor& x, const Tensor& residual, float p, const DropoutKey& key,
                              const Tensor& row_slots, int64_t num_slots, const Tensor& gamma, const Tensor& beta,
                              float eps, DType half_dtype, Tensor* sum, Tensor* y, Tensor* y_half, Tensor* mean,
                              Tensor* rstd);

// The backward of the site: d_sum = LayerNorm's input gradient (f32: the residual's gradient)
// and d_x = DropoutRows's backward of d_sum rounded to x_dtype (the projection's gradient), in
// one kernel, then dgamma/dbeta += as LayerNormBackward adds them (its own two kernels).
// [in] dy, sum [rows, H] f32; mean, rstd [rows] f32 from the forward; gamma [H] f32; p, key,
//      row_slots, num_slots as the forward's; x_dtype f32|f16|bf16; H with ResidualLayerNormFuses.
// [in,out] dgamma, dbeta [H] f32. [out] d_sum (f32), d_x (x_dtype): new [rows, H] tensors.
void ResidualLayerNormBackward(const Tensor& dy, const Tensor& sum, const Tensor& mean, const Tensor& rstd,
                               const Tensor& gamma, float p, const DropoutKey& key, const Tensor& row_slots,
                               int64_t num_slots, DType x_dtype, Tensor* dgamma, Tensor* dbeta, Tensor* d_sum,
                               Tensor* d_x);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_RESIDUAL_LAYER_NORM_H_
