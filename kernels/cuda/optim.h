// The optimizer-step passes over the flat fp32 buffers of a ParameterStore, on the GPU: the fp16
// unscale + inf/NaN check, the sum of squares behind the global gradient norm, the clipping
// multiply, and AdamW (fused with the refresh of the f16/bf16 working copy). The CUDA twin of
// kernels/cpu/optim.h, called through framework/ops/optim.h: each pass mirrors the CPU's range
// function element for element, with the same roundings, so the results are bit for bit the
// CPU's (the norm aside: see SumOfSquares).
//
// Plain C++ header. All work is queued on CudaContext::Current().compute_stream(); functions that
// return a value computed on the device wait for that stream.
#ifndef XLMR_KERNELS_CUDA_OPTIM_H_
#define XLMR_KERNELS_CUDA_OPTIM_H_

#include <cstdint>
#include <vector>

#include "framework/tensor/tensor.h"
#include "kernels/common/adamw_step.h"
#include "kernels/common/step_state.h"

namespace xlmr::kernels::cuda {

// One AdamW update of every element covered by `runs`, exactly kernels/cpu/optim.h's
// AdamWUpdateRange per run (the same two fused multiply-adds, every other product, quotient,
// square root and sum rounded on its own; decay_factor applied only where run.decay).
//   [in]     runs: in increasing offset order, non-overlapping, inside [0, param.numel());
//            empty runs are allowed. Gaps between runs are left untouched.
//   [in,out] param, exp_avg, exp_avg_sq: [total] F32, Device::kCuda.
//   [in]     grad: [total] F32, Device::kCuda.
//   [out]    half_param: nullptr, or F16|BF16 on Device::kCuda, the half working copy of elements
//            [half_first, half_first + n) (framework/ops/optim.h): element i of a half_copy run
//            also gets __float2half_rn / __float2bfloat16_rn(new param) at half_param[i -
//            half_first], in the same pass.
// Asynchronous. The runs travel as kernel arguments (up to kRunsPerLaunch per launch), so no
// table is uploaded and nothing synchronises: XLM-R large with weight decay (about 300 runs)
// takes two launches.
void AdamWStep(const AdamWStepScalars& scalars, const std::vector<AdamWDecayRun>& runs,
               Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
               Tensor* half_param, int64_t half_first = 0);

// kernels/cpu/optim.h's UnscaleAndCheckFiniteRange over all of `grads` ([n] F32,
// Device::kCuda): one pass multiplying every value by inv_scale (non-finite ones too) and
// noting whether any was inf or NaN before the multiply. Returns true when all were finite. Waits for the stream (the
// answer decides on the host whether the step runs).
bool UnscaleAndCheckFinite(Tensor& grads, float inv_scale);

// kernels/cpu/optim.h's AllFiniteRange: true when every value of `values` ([n] F32,
// Device::kCuda) is finite. Reads only. Waits for the stream.
bool AllFinite(const Tensor& values);

// Sum of v^2 over `values` ([n] F32, Device::kCuda), accumulated in double (each square is exact
// in double), with a fixed two-stage reduction: a grid of min(ceil(n / 256), 1024) blocks whose
// shape depends on n only, each thread summing a grid stride in index order, a fixed tree per
// block, then one block summing the partials in a fixed order. Deterministic: the same input
// gives the same bits on every run and every GPU. The order differs from kernels/cpu/optim.h's
// SumOfSquaresRange (blocks of interleaved partial sums), so the two may differ by rounding:
// both are within (n - 1) * 2^-53 relative of the exact sum (all terms are >= 0), far below the
// float32 rounding the norm then gets. Infinite or NaN values give inf or NaN. 0 for n == 0.
// Waits for the stream.
double SumOfSquares(const Tensor& values);

// values[i] *= factor (rounded once, as kernels/cpu/optim.h's ScaleRange).
// [in,out] values: [n] F32, Device::kCuda. Asynchronous.
void ScaleInPlace(Tensor& values, float factor);

// half[i] = __float2half_rn / __float2bfloat16_rn(master[i]): the half working copy after weights
// change outside the optimizer (load, restore). [in] master: [n] F32; [out] half: [n] F16|BF16;
// both Device::kCuda.
// Asynchronous. Linking this target also registers it as ParameterStore's device refresh
// (framework/tensor/parameter_store.h, RegisterDeviceHalfCopyRefresh).
void RefreshHalfCopy(const Tensor& master, Tensor& half);

// ---- With the device step state (framework/ops/step_decisions.h): nothing waits. ----
// `row` / `previous` point at a row of the step-state ring in device memory (kStepSlots
// doubles). The scalar decisions are kernels/common/step_state.h's functions, evaluated by the
// kernels themselves (every thread computes the same value from the row); the passes are the
// ones above, so their bits are the CPU's as stated there.

// The kStepSlots doubles of row `from` into row `to`, one thread.
void CopyStepRow(const double* from, double* to);
// BeginStepRow(previous, row, *loss_terms), one thread; loss_terms in device memory (the row's
// StepInputs).
void BeginStepState(const double* previous, double* row, const double* loss_terms);
// framework/ops/step_decisions.h's pass 1: one read of the raw gradients gives
// row[kSlotFoundInf] (UnscaleAndCheckFinite's flag) and row[kSlotSumOfSquares] (SumOfSquares of
// the values unscaled by InverseScaleOf(row), or as they are when !unscale, with its grid and
// order); the gradients are not written. [in] grads: [n] F32, n > 0.
void FlagNonFiniteAndSumSquares(const Tensor& grads, double* row, bool unscale);
// SumOfSquares's reduction, its result stored at `result` (device memory) instead of read back.
void SumOfSquaresInto(const Tensor& values, double* result);
// Pass 2: AdamWStep on the raw gradients unscaled (when `unscale`) and clipped to max_grad_norm as
// they are read, with the candidate AdamWCandidateOf(row) of `candidates` (device memory: the
// row's StepInputs) picked on the device (one thread copies it to device scratch; no candidate
// sets row[kSlotCandidateError]); every gradient of the runs is then 0. Nothing but the
// clearing when StepSkips(row).
void AdamWStepWithState(const AdamWCandidates* candidates, const std::vector<AdamWDecayRun>& runs,
                        Tensor& param, Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
                        Tensor* half_param, int64_t half_first, double* row, bool unscale,
                        double max_grad_norm);
// FinishStepRow(row, rule), one thread.
void FinishStepState(double* row, const LossScaleRule& rule);

// Runs per AdamW launch (they are passed by value in the kernel's parameter space, 4 KiB).
inline constexpr int kRunsPerLaunch = 192;

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_OPTIM_H_
