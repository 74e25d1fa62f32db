// Global-norm gradient clipping over the flat gradient buffer, as
// torch.nn.utils.clip_grad_norm_(parameters, max_norm) (norm_type 2), which the Hugging Face
// Trainer calls once per optimizer step with --max_grad_norm.
//
// Norm accuracy: torch computes a float32 norm per tensor and then the norm of those norms,
// accumulating in float32, so its result carries a few float32 ulps of rounding. We accumulate
// the squares in double: the norm is the exact one to about 1e-12 relative for any buffer we
// train, and rounds to within a few float32 ulps of torch's. Clipping then follows torch's
// float32 arithmetic on that norm.
#ifndef XLMR_FRAMEWORK_OPTIM_GRAD_CLIP_H_
#define XLMR_FRAMEWORK_OPTIM_GRAD_CLIP_H_

#include <cstdint>

#include "absl/status/status.h"
#include "framework/tensor/tensor.h"

namespace xlmr::optim {

// sqrt(sum of g^2) over every element. [in] flat_grads: f32, CPU or CUDA. Infinite or NaN
// gradients give an infinite or NaN norm. The sum (ops::SumOfSquares) is accumulated in double
// in an order fixed by the element count alone, never by the thread count: on the CPU, blocks
// of 2^15 elements, each summed in 8 interleaved partial sums (element i into partial sum i % 8,
// combined pairwise), block sums added in block order; on CUDA a deterministic two-stage
// reduction (kernels/cuda/optim.h's SumOfSquares).
double GlobalL2Norm(const Tensor& flat_grads);
// GlobalL2Norm's square before the root, summed the same way: what each rank contributes under
// ZeRO stage 1, where every rank holds the gradients of its own shard only and the norm is the
// root of the sum over ranks (framework/train/train_step.cc). 0 for an empty buffer.
double SumOfSquares(const Tensor& flat_grads);

// The factor the gradients are multiplied by, in torch's float32 arithmetic:
//   clip_coef = float(max_norm) * (1 / (float(total_norm) + 1e-6f))   (torch's max_norm / t is
//   t.reciprocal() * max_norm), clamped to at most 1.0f.
// max_norm <= 0 disables clipping (factor 1): the Trainer skips clipping for
// --max_grad_norm 0. [in] total_norm: finite, >= 0 (checked; steps with non-finite gradients
// are skipped before clipping). TrainStep evaluates the same on the device from the step's sum
// of squares (kernels/common/step_state.h's ClipCoefficientOf).
float ClipCoefficient(double total_norm, double max_norm);

// Multiplies every gradient by ClipCoefficient(total_norm, max_norm) when it is below 1 (a
// factor of exactly 1 would leave the values unchanged, so torch's unconditional multiply is
// the same). [in,out] flat_grads: f32, CPU or CUDA. [in] total_norm: GlobalL2Norm(flat_grads).
void ClipGradNorm(Tensor& flat_grads, double total_norm, double max_norm);

// --max_grad_norm: a finite number >= 0 (0 disables clipping).
absl::Status ValidateMaxGradNorm(double max_grad_norm);

}  // namespace xlmr::optim

#endif  // XLMR_FRAMEWORK_OPTIM_GRAD_CLIP_H_
