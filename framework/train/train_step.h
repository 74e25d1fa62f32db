// One optimizer step, top to bottom (docs/ARCHITECTURE.md, "One optimizer step"):
//
//   for each micro-step m of the accumulation window:
//       logits = model.Forward(batch_m)                  // blocks keep or drop activations per plan
//       d_logits = d loss / d logits * loss_scale / N    // N = loss terms in the GLOBAL batch
//       model.Backward(d_logits, hook = sync on m == last only)
//   sync.Finish()                                        // no communication before the last micro-step
//   finite = all ranks agree that UnscaleAndCheckFinite(grads)
//   if finite: clip to max_grad_norm; AdamW step at the scheduled LR; refresh fp16 weights
// Under ZeRO stage 1 (a sharded GradientSynchronizer) the buckets are reduce-scattered instead,
// the check, the norm's sum of squares, clipping and AdamW read this rank's shard (the finite
// flag and the sum agreed over ranks), and the updated weights are all-gathered at the end.
//   scaler.Update(finite)                                // once per optimizer step
//
// Normalising every micro-batch's loss by the global batch's term count (examples; labelled
// tokens for token classification, start and end positions for question answering:
// framework/train/objective.h), not by its own size, makes the accumulated, all-reduced gradient exactly the gradient of the mean loss over
// the global batch, however it is split into micro-steps and ranks, partial batches included.
#ifndef XLMR_FRAMEWORK_TRAIN_TRAIN_STEP_H_
#define XLMR_FRAMEWORK_TRAIN_TRAIN_STEP_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/amp/loss_scaler.h"
#include "framework/data/collate.h"
#include "framework/distributed/gradient_synchronizer.h"
#include "framework/optim/adamw.h"
#include "framework/optim/lr_schedule.h"
#include "framework/train/model_interface.h"
#include "framework/train/objective.h"

namespace xlmr::train {

struct StepSettings {
  DType autocast = DType::kF32;  // PassContext::autocast (loss scaling is the scaler's business)
  double max_grad_norm = 1.0;  // <= 0 disables clipping
  uint64_t seed = 42;
  Device device = Device::kCpu;
  Objective objective = Objective::kSingleLabel;
  float label_smoothing = 0.0f;  // --label_smoothing_factor (framework/train/objective.h)
};

struct StepOutcome {
  double loss = 0;                   // mean unscaled loss over the global batch's loss terms
  bool skipped = false;              // inf/nan gradients: nothing was updated
  std::optional<double> grad_norm;   // of the unscaled gradient, before clipping
  double loss_scale = 1;             // the scale this step used
  double learning_rate = 0;          // the scheduled rate (not applied when skipped)
  int micro_steps = 0;
};

// The loss terms a step's mean is over (TrainStep::Run's global_loss_terms): the global
// batch's examples, or for kPerToken its labelled tokens and for kSpanStartEnd its start and
// end positions (2 per window: HF's (start loss + end loss) / 2), which only the ranks together
// know (the sum of every rank's Batch::loss_terms: one all-reduce when there are several ranks).
int64_t GlobalLossTerms(Objective objective, const std::vector<data::Batch>& micro_batches,
                        int64_t global_examples, distributed::Communicator& comm);

class TrainStep {
 public:
  TrainStep(TrainableModel& model, distributed::GradientSynchronizer& sync,
            amp::DynamicLossScaler& scaler, optim::AdamW& optimizer,
            const optim::LrSchedule& schedule, StepSettings settings)
      : model_(model), sync_(sync), scaler_(scaler), optimizer_(optimizer),
        schedule_(schedule), settings_(settings) {}

  // Runs optimizer step `step` (0-based) over this rank's micro-batches (host batches; empty
  // ones allowed), `global_loss_terms` being the loss terms of the global batch over all ranks
  // (the sum of every rank's Batch::loss_terms; > 0).
  // Fails only when the loss scale collapses (the run cannot continue meaningfully).
  absl::StatusOr<StepOutcome> Run(int64_t step, const std::vector<data::Batch>& micro_batches,
                                  int64_t global_loss_terms);

 private:
  // Forward + backward of one micro-batch; returns its summed (unscaled) loss.
  double RunMicroStep(const data::Batch& batch, const PassContext& context, float gradient_scale,
                      bool last);
  // [in,out] grads: the summed gradients this rank owns (GradientSynchronizer::owned()).
  void ApplyUpdate(StepOutcome& outcome, Tensor& grads);

  TrainableModel& model_;
  distributed::GradientSynchronizer& sync_;
  amp::DynamicLossScaler& scaler_;
  optim::AdamW& optimizer_;
  const optim::LrSchedule& schedule_;
  StepSettings settings_;
};

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_TRAIN_STEP_H_
