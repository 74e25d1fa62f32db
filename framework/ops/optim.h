// The optimizer step's passes over flat fp32 buffers (a ParameterStore's masters, gradients and
// Adam moments), dispatched to the CPU or the CUDA kernel like every op (kernels/{cpu,cuda}/
// optim.h). They are not differentiable and no model calls them: framework/optim (AdamW,
// gradient norm and clipping) and framework/amp (the loss scaler's unscale) do, and their
// headers state the arithmetic: AdamW's formula in framework/optim/adamw.h, the norm's
// summation order and the clipping in framework/optim/grad_clip.h, the unscale in
// framework/amp/loss_scaler.h. Both backends give the same bits, except the sum of squares,
// whose CUDA reduction adds in another (also fixed) order (kernels/cuda/optim.h).
// framework/ops/step_decisions.h runs the same passes with their decisions (flag, norm, clip
// coefficient, AdamW's scalars, the skip) kept on the device, as the training step does.
#ifndef XLMR_FRAMEWORK_OPS_OPTIM_H_
#define XLMR_FRAMEWORK_OPS_OPTIM_H_

#include <cstdint>
#include <vector>

#include "framework/tensor/tensor.h"
#include "kernels/common/adamw_step.h"

namespace xlmr::ops {

// Declared once for every backend in kernels/common/adamw_step.h.
using kernels::AdamWDecayRun;
using kernels::AdamWStepScalars;

// One AdamW update of every element covered by `runs` (framework/optim/adamw.h's formula,
// scalars.decay_factor applied only where run.decay); elements outside the runs are untouched.
//   [in]     runs: in increasing offset order, non-overlapping, inside [0, param.numel()).
//   [in,out] param, exp_avg, exp_avg_sq: [total] f32.  [in] grad: [total] f32.
//   [out]    half_param: nullptr, or [n] f16|bf16, the half working copy of elements
//            [half_first, half_first + n): every updated element i of a run with half_copy
//            also gets its new param rounded to nearest even at half_param[i - half_first], in
//            the same pass. Every half_copy run must lie inside that window (half_first may be
//            negative: the window starts before `param`'s first element).
// All on one device.
void AdamWStep(const AdamWStepScalars& scalars, const std::vector<AdamWDecayRun>& runs,
               Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
               Tensor* half_param, int64_t half_first = 0);

// Aborts naming `op` unless every run with half_copy lies inside half_param's window
// [half_first, half_first + half_param->numel()) (AdamWStep's contract); nothing for null.
void CheckHalfCopyWindow(const char* op, const std::vector<AdamWDecayRun>& runs, const Tensor* half_param,
                         int64_t half_first);

// [in,out] grads: [n] f32. Multiplies every value by inv_scale (non-finite ones too) and returns
// true when all were finite before the multiply. On CUDA it waits for the stream.
bool UnscaleAndCheckFinite(Tensor& grads, float inv_scale);

// True when every value of `values` ([n] f32) is finite. Reads only.
bool AllFinite(const Tensor& values);

// Sum of v^2 over `values` ([n] f32), accumulated in double in an order fixed by n alone (the
// CPU's is stated in kernels/cpu/optim.h, the GPU's in kernels/cuda/optim.h). 0 for n == 0.
double SumOfSquares(const Tensor& values);

// values[i] *= factor, rounded once. [in,out] values: [n] f32.
void ScaleInPlace(Tensor& values, float factor);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_OPTIM_H_
