// The optimizer step's decisions on the device (kernels/common/step_state.h states the slots
// and the arithmetic): ops that read and write a step-state ring instead of returning values to
// the host, so that nothing in a step waits for the device. framework/train/train_step.h calls
// them in this order for step s, row r = s % kStepStateRows, p = the previous step's row:
//   WriteStepInputs(state, r, {AdamW candidates, loss terms, dropout step})
//   BeginStepState(state, r, p)
//   per micro-batch: AccumulateObjectiveLoss into the row's loss sum, the loss backward scaled
//   by the row's gradient scale (framework/ops/loss.h's GradientScale::InState)
//   FlagNonFiniteAndSumSquares(grads, state, r)   (flag agreed, sharded sum summed over ranks)
//   AdamWStepWithState(..., grads, ..., state, r, rule)   (unscale, clip, AdamW, zero)
//   FinishStepState(state, r, rule)
// Each pass gives the same bits as the host-decided code it replaces (framework/amp's
// UnscaleAndCheckFinite and Update, framework/optim's SumOfSquares, ClipGradNorm and AdamW::Step)
// on the same backend: the passes over the gradients are the same kernels, and the scalar
// decisions are step_state.h's functions, run on the host for the CPU and by one CUDA thread.
//
// The state: an I64 tensor of kStepStateDoubles elements whose bytes are doubles (Tensor has no
// f64 dtype), on the gradients' device: the ring's rows, then each row's StepInputs; MakeStepState
// allocates it; StepSlotElement(row, slot) is the index of one double. Every op after
// WriteStepInputs reads the host's per-step values from the state, none takes them as an
// argument: a step's queued work is the same for every step of the same shapes and row, so that
// it can be captured once and replayed (framework/train/step_graphs.h).
#ifndef XLMR_FRAMEWORK_OPS_STEP_DECISIONS_H_
#define XLMR_FRAMEWORK_OPS_STEP_DECISIONS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "framework/tensor/tensor.h"
#include "kernels/common/adamw_step.h"
#include "kernels/common/step_state.h"

namespace xlmr::kernels::cuda {
class StepRowReader;
}  // namespace xlmr::kernels::cuda

namespace xlmr::ops {

using kernels::AdamWCandidates;
using kernels::LossScaleRule;

// A zeroed ring on `device`, category kWorkspace (kStepStateAllRows x kStepSlots doubles and as
// many StepInputs: under
// 1 KiB; optimizer_bytes and the memory plan count the moments alone).
Tensor MakeStepState(Device device);

// Host <-> state copies of whole rows (the host's initial row; its reads of a step's
// decisions). On CUDA these wait for the stream: the caller decides when (TrainStep: once per
// read, not per step). [out]/[in] row: kStepSlots doubles.
std::vector<double> ReadStepRow(const Tensor& state, int row);
void WriteStepRow(Tensor& state, int row, const std::vector<double>& values);

// The host's late reads of a ring's rows (TrainStep): Queue a row at the end of its step, then
// Read it later (a wait only for a row the device has not finished: on CUDA a copy into pinned
// memory behind an event, kernels/cuda/step_row_reader.h).
// On the CPU the ring is host memory: a queued row has arrived and is read where it is. A row
// must not be written between its Queue and its Read (TrainStep reuses a row only once read).
class StepRowReads {
 public:
  explicit StepRowReads(Device device);
  ~StepRowReads();
  StepRowReads(const StepRowReads&) = delete;
  StepRowReads& operator=(const StepRowReads&) = delete;

  void Queue(const Tensor& state, int row);
  std::vector<double> Read(const Tensor& state, int row);

 private:
  Device device_;
  std::unique_ptr<kernels::cuda::StepRowReader> cuda_;  // CUDA only
};

// Writes the row's StepInputs (a host -> device copy in stream order, no wait): candidates.count
// in [1, kMaxAdamWCandidates], loss_terms > 0 (the global batch's: framework/train/
// train_step.h's GlobalLossTerms).
void WriteStepInputs(Tensor& state, int row, const kernels::StepInputs& inputs);

// Where the row's StepInputs::dropout_step lies on the device (PassContext::step_on_device), or
// null for a CPU state (the CPU reads the step from the pass context).
const uint32_t* DropoutStepOnDevice(const Tensor& state, int row);

// Row `from`'s doubles into row `to`, in stream order (no wait): a captured step's rows in and
// out (kernels::kCapturedRow, kCapturedPreviousRow).
void CopyStepRow(Tensor& state, int from, int to);

// kernels::BeginStepRow(row `previous`, row `row`, the row's StepInputs::loss_terms).
void BeginStepState(Tensor& state, int row, int previous);

// The index of `slot` of `row` among the state's doubles (for ops that read or add one).
int64_t StepSlotElement(int row, kernels::StepSlot slot);

// The step's two passes over the raw (loss-scaled) gradients, which read them twice where
// unscaling, the norm, clipping and AdamW in place read them four times (and the next step's
// zeroing wrote them once more), with the same bits.
//
// Pass 1, one read: the row's found_inf (a value was inf/NaN) and sum_of_squares of the unscaled
// gradients (each g * InverseScaleOf(row) rounded to float when `unscale`, else g), in
// ops::SumOfSquares's order; the gradients are left as they are. [in] grads: [n] f32.
void FlagNonFiniteAndSumSquares(const Tensor& grads, Tensor& state, int row, bool unscale);

// How pass 2 turns a raw gradient into AdamW's: unscale (the loss scaler is on) and clip to
// max_grad_norm (<= 0: no clipping), as framework/train/train_step.h's settings say.
struct RawGradientRule {
  bool unscale = false;
  double max_grad_norm = 0.0;
};

// Pass 2: ops::AdamWStep with the row's StepInputs::candidates.scalars[AdamWCandidateOf(row)]
// on the gradients formed as they are read, (g * InverseScaleOf(row)) *
// ClipCoefficientOf(row, max_grad_norm), each product rounded; every gradient is then 0 (the next step's zeroing). A step that skips, or whose
// count has no candidate (candidate_error set), updates nothing and only clears the gradients.
// Arguments as ops::AdamWStep (half_param's window starts at element half_first); [in,out] grad.
void AdamWStepWithState(const std::vector<kernels::AdamWDecayRun>& runs, Tensor& param, Tensor& grad,
                        Tensor& exp_avg, Tensor& exp_avg_sq, Tensor* half_param, const Tensor& state, int row,
                        const RawGradientRule& rule, int64_t half_first = 0);

// kernels::FinishStepRow(row, rule): the skip flag, the update count, the next loss scale.
void FinishStepState(Tensor& state, int row, const LossScaleRule& rule);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_STEP_DECISIONS_H_
