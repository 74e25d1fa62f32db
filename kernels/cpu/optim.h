// The optimizer step's passes over the flat fp32 buffers of a ParameterStore, on the CPU: AdamW,
// the fp16 unscale + inf/NaN check, the sum of squares behind the global gradient norm and the
// clipping multiply. The CPU twin of kernels/cuda/optim.h, called through framework/ops/optim.h.
// The arithmetic each pass evaluates is stated by the code that decides it: AdamW's formula in
// framework/optim/adamw.h (torch's), the unscale in framework/amp/loss_scaler.h (torch's
// GradScaler), the norm and the clipping in framework/optim/grad_clip.h.
//
// Every pass runs on the CPU threads (parallel.h) and is built per instruction set with the same
// roundings in each: element by element, or (the sum of squares) in an order fixed by the
// length alone, so the bits depend neither on the CPU nor on the thread count.
#ifndef XLMR_KERNELS_CPU_OPTIM_H_
#define XLMR_KERNELS_CPU_OPTIM_H_

#include <cstdint>
#include <vector>

#include "framework/tensor/tensor.h"
#include "kernels/common/adamw_step.h"

namespace xlmr::kernels::cpu {

// framework/ops/optim.h checks the devices, dtypes and sizes first and passes the tensors' host
// arrays to all but AdamWStep. tests/gpu compares these functions with the CUDA kernels.

// AdamWUpdateRange over every run; elements outside the runs are left untouched.
//   [in]     runs: in increasing offset order, non-overlapping, inside [0, param.numel()).
//   [in,out] param, exp_avg, exp_avg_sq: [total] f32.  [in] grad: [total] f32.
//   [out]    half_param: nullptr, or the half working copy of elements [half_first, half_first
//            + n) (framework/ops/optim.h): element i of a half_copy run also gets its new param
//            rounded to nearest even at half_param[i - half_first], in the same pass.
void AdamWStep(const AdamWStepScalars& scalars, const std::vector<AdamWDecayRun>& runs,
               Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
               Tensor* half_param, int64_t half_first = 0);

// One AdamW update of `n` contiguous elements, framework/optim/adamw.h's formula:
// [in,out] param, exp_avg, exp_avg_sq; [in] grad. `decay` applies scalars.decay_factor.
// A kernel mirroring it must fuse exactly the two multiply-adds written as fma here and round
// every other product and sum (nvcc contracts a * b + c by default: use __fmul_rn/__fadd_rn).
void AdamWUpdateRange(const AdamWStepScalars& scalars, bool decay, float* param,
                      const float* grad, float* exp_avg, float* exp_avg_sq, int64_t n);

// Multiplies each of `n` gradients by inv_scale and returns true when every value was finite
// before the multiply. Non-finite values are multiplied too (they stay non-finite), as torch's
// _amp_foreach_non_finite_check_and_unscale_.
bool UnscaleAndCheckFiniteRange(float* grads, int64_t n, float inv_scale);

// True when all `n` values are finite; reads only.
bool AllFiniteRange(const float* values, int64_t n);

// values[i] *= factor for `n` values, each rounded once.
void ScaleRange(float* values, int64_t n, float factor);

// Sum of squares of `n` floats, accumulated in double in the order framework/optim/grad_clip.h
// states: blocks of 2^15 elements, each in lane_sums.h's order, block sums added in block order.
// The blocks run on the CPU threads; the result is the same for every thread count.
double SumOfSquaresRange(const float* values, int64_t n);

// The two passes of the optimizer step over raw (loss-scaled) gradients (framework/ops/
// step_decisions.h), which give the bits of the passes above run one after another in place
// (unscale, sum of squares, clip, AdamW) while reading the gradients twice instead of five times.
//
// Pass 1, one read: whether every gradient is finite, and SumOfSquaresRange of grads[i] *
// inv_scale (each product rounded to float: the unscaled gradient; inv_scale 1 for none).
struct FiniteAndSumOfSquares {
  bool finite;
  double sum_of_squares;
};
FiniteAndSumOfSquares FlagAndSumOfSquaresRange(const float* grads, int64_t n, float inv_scale);
// Pass 2: AdamWStep on g = (grad * inv_scale) * clip, each product rounded (clip 1 for none),
// every gradient of the runs then set to 0 (the next step's zeroing).
void AdamWStepFromRawGradients(const AdamWStepScalars& scalars, const std::vector<AdamWDecayRun>& runs,
                               float inv_scale, float clip, Tensor& param, Tensor& grad, Tensor& exp_avg,
                               Tensor& exp_avg_sq, Tensor* half_param, int64_t half_first = 0);
// values[0, n) = 0 (pass 2 of a skipped step).
void ClearRange(float* values, int64_t n);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_OPTIM_H_
