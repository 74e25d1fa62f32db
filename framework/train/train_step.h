// One optimizer step, top to bottom (docs/ARCHITECTURE.md, "One optimizer step"):
//
//   for each micro-step m of the accumulation window:
//       logits = model.Forward(batch_m)                  // blocks keep or drop activations per plan
//       d_logits = d loss / d logits * loss_scale / N    // N = loss terms in the GLOBAL batch
//       model.Backward(d_logits, hook = sync on m == last only)
//   sync.Finish()                                        // no communication before the last micro-step
//   found_inf = any rank saw inf/NaN while unscaling grads
//   unless found_inf: clip to max_grad_norm; AdamW step at the scheduled LR; refresh fp16 weights
// Under ZeRO stage 1 (a sharded GradientSynchronizer) the buckets are reduce-scattered instead,
// the check, the norm's sum of squares, clipping and AdamW read this rank's shard (the finite
// flag and the sum agreed over ranks), and the updated weights are all-gathered at the end.
//   scaler.Update(!found_inf)                            // once per optimizer step
//
// Everything after the backward is decided on the device (framework/ops/step_decisions.h, as
// PyTorch's _amp_update_scale_ and fused optimizers with found_inf): the flag, the norm, the
// clip coefficient, the skip, AdamW's scalars (picked among host-computed candidates by the
// update count, which only the device knows at once) and the next scale are written into a
// step-state ring, and no host code branches on them. The host reads a step's row later
// (Collect), to learn its StepOutcome and to mirror the scale and the update count into the
// scaler and the optimizer (checkpoints, SIGTERM). The results are bit for bit those of the host
// decisions this replaced (tests/recipes/step_decisions_test.sh's golden).
// The loss is summed into the row on the device and the loss gradient's scale read from it
// (framework/ops/loss.h's Accumulate* and GradientScale::InState); Collect sums the loss over
// ranks when it reads the row. Under several ranks the flag and the sharded sum of squares are
// summed where they are (Communicator::AllReduceSumStateDoubles: NCCL's sum on the device).
//
// The host's per-step values (AdamW's candidate scalars, the loss terms, the dropout step) are
// written into the state before the step's work, which reads them there: the queued work
// (QueueStep) is then the same for every step of one batch layout, and on CUDA it is captured
// once and replayed on the state's captured rows (framework/train/step_graphs.h;
// StepSettings::cuda_graphs).
//
// Normalising every micro-batch's loss by the global batch's term count (examples; labelled
// tokens for token classification, start and end positions for question answering:
// framework/train/objective.h), not by its own size, makes the accumulated, all-reduced gradient exactly the gradient of the mean loss over
// the global batch, however it is split into micro-steps and ranks, partial batches included.
#ifndef XLMR_FRAMEWORK_TRAIN_TRAIN_STEP_H_
#define XLMR_FRAMEWORK_TRAIN_TRAIN_STEP_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/amp/loss_scaler.h"
#include "framework/data/collate.h"
#include "framework/distributed/gradient_synchronizer.h"
#include "framework/ops/step_decisions.h"
#include "framework/optim/adamw.h"
#include "framework/optim/lr_schedule.h"
#include "framework/train/model_interface.h"
#include "framework/train/objective.h"
#include "framework/train/step_graphs.h"

namespace xlmr::train {

struct StepSettings {
  DType autocast = DType::kF32;  // PassContext::autocast (loss scaling is the scaler's business)
  double max_grad_norm = 1.0;  // <= 0 disables clipping
  uint64_t seed = 42;
  Device device = Device::kCpu;
  Objective objective = Objective::kSingleLabel;
  float label_smoothing = 0.0f;  // --label_smoothing_factor (framework/train/objective.h)
  // Called once per step with the summed gradients this rank owns, after they crossed the ranks
  // and before the optimizer reads them (where HF's TrainerCallback.on_pre_optimizer_step sees
  // them): still multiplied by the step's loss scale and unclipped, since the optimizer unscales
  // and clips as it reads them, and zeroes them after. On CUDA, a host copy of them is a wait.
  std::function<void(const Tensor& gradients)> on_gradients;
  float similarity_scale = kDefaultSimilarityScale;  // kInBatchNegatives' scale
  // kInBatchNegatives, > 0: the cached form (GradCache; sentence-transformers'
  // CachedMultipleNegativesRankingLoss): each micro-batch's texts are embedded in mini-batches of
  // this many texts of one column (sentence-transformers' chunks) without keeping activations, the loss and its gradient with respect to every
  // embedding are taken over the whole micro-batch, then each mini-batch runs forward again and
  // backward from its embeddings' gradient. Activation memory is one mini-batch's; the loss and
  // gradients are the uncached ones up to rounding. Each mini-batch keys its dropout masks as
  // micro-step `micro_step + (index + 1) * 65536` (the same in both of its passes).
  int64_t cached_mini_batch_size = 0;
  // In-batch negatives, > 0: the candidates gathered from every rank (framework/train/
  // gathered_rows.h; sentence-transformers' gather_across_devices), rows of this many texts.
  int64_t gathered_columns = 0;
  // --cuda_graphs: on CUDA, steps that can be are captured once per batch layout and replayed
  // (framework/train/step_graphs.h; TrainStep::CaptureKey says which). Same results either way.
  bool cuda_graphs = true;
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
// batch's examples, or for kPerToken its labelled tokens, for kSpanStartEnd its start and
// end positions (2 per window: HF's (start loss + end loss) / 2), for kSymmetricInBatchNegatives
// twice its rows (examples), and for kScoredPairs its
// non-empty micro-batches (the Trainer's mean over accumulation steps and ranks), which only the
// ranks together know (the sum of every rank's Batch::loss_terms: one all-reduce when there are several ranks).
int64_t GlobalLossTerms(Objective objective, const std::vector<data::Batch>& micro_batches,
                        int64_t global_examples, distributed::Communicator& comm);

// One object for the whole run: it holds the step-state ring, which starts (at the first
// Enqueue) from the scaler's and the optimizer's state at that time (fresh or restored). The
// scaler's state and the optimizer's count are then mirrors of the device's, written by
// Collect; a change made to them on the host while no step is pending (RestoreState) restarts
// the ring from them at the next Enqueue.
class TrainStep {
 public:
  TrainStep(TrainableModel& model, distributed::GradientSynchronizer& sync,
            amp::DynamicLossScaler& scaler, optim::AdamW& optimizer,
            const optim::LrSchedule& schedule, StepSettings settings);

  // Queues optimizer step `step` (0-based) over this rank's
  // micro-batches (host batches; empty ones allowed), `global_loss_terms` being the loss terms of
  // the global batch over all ranks (the sum of every rank's Batch::loss_terms; > 0). At most
  // kernels::kStepStateRows steps may be pending (enqueued, not collected).
  void Enqueue(int64_t step, const std::vector<data::Batch>& micro_batches, int64_t global_loss_terms);
  // The oldest pending step's outcome, read from the device, and the scaler's and optimizer's
  // state after it mirrored into them. Fails when that step's overflow took the loss scale
  // below min_scale (the run cannot continue meaningfully; the device updates nothing from
  // then on, so the weights are those of the failure however late the host reads).
  absl::StatusOr<StepOutcome> Collect();
  int pending() const { return static_cast<int>(pending_.size()); }
  // The step graphs (StepSettings::cuda_graphs on CUDA), or null.
  const StepGraphs* graphs() const { return graphs_.get(); }

  // Enqueue, then Collect: the trainer's call (metrics.jsonl has a line per step).
  absl::StatusOr<StepOutcome> Run(int64_t step, const std::vector<data::Batch>& micro_batches,
                                  int64_t global_loss_terms);

 private:
  struct PendingStep {
    int row = 0;
    int64_t loss_terms = 0;  // of the global batch: the mean's denominator
    int micro_steps = 0;
  };
  // The AdamW scalars for every update count the step may start from: the count after the
  // last collected step plus 0 .. pending() updates.
  ops::AdamWCandidates Candidates() const;
  // Sums `slot` of `row` over the ranks (in place).
  void SumOverRanks(int row, kernels::StepSlot slot);

  // The step's layout key (StepLayoutKey) when its work may be captured and replayed
  // (framework/train/step_graphs.h), else "".
  std::string CaptureKey(const std::vector<data::Batch>& micro_batches) const;
  // The step's device work, from BeginStepState to FinishStepState: what a graph captures.
  // run_micro_step(m, context, last) queues micro-step m.
  void QueueStep(int64_t step, int row, int previous, int micro_steps,
                 const std::function<void(int, const PassContext&, bool)>& run_micro_step);
  // QueueStep captured or replayed (framework/train/step_graphs.h) on the captured rows, the
  // step's `row` copied from them after.
  void QueueCapturedStep(int64_t step, int row, int previous, const std::string& key,
                         const std::vector<data::Batch>& micro_batches, const kernels::StepInputs& inputs);
  // One micro-step from a host batch, in whichever form the settings ask for (plain, cached,
  // gathered; nothing for a rank's empty share).
  void RunHostMicroStep(const data::Batch& batch, const PassContext& context, int row, bool last);
  // Forward + backward of one micro-batch; its summed (unscaled) loss is added to the row.
  void RunMicroStep(const MicroBatchOnDevice& batch, const PassContext& context, int row, bool last);
  // The same in the cached form (StepSettings::cached_mini_batch_size).
  void RunCachedMicroStep(const data::Batch& batch, const PassContext& context, int row, bool last);
  // In-batch negatives over every rank's rows (StepSettings::gathered_columns); runs on a rank
  // whose share of the micro-batch is empty too, since every rank takes part in the gather.
  void RunGatheredMicroStep(const data::Batch& batch, const PassContext& context, int row, bool last);
  // The optimizer's pass over the summed raw gradients this rank owns (GradientSynchronizer::owned()).
  void ApplyUpdate(int row);

  TrainableModel& model_;
  distributed::GradientSynchronizer& sync_;
  amp::DynamicLossScaler& scaler_;
  optim::AdamW& optimizer_;
  const optim::LrSchedule& schedule_;
  StepSettings settings_;
  Tensor state_;                   // ops::MakeStepState on settings_.device
  ops::StepRowReads reads_;        // each enqueued step's row, read by Collect
  int64_t enqueued_ = 0;           // steps enqueued so far: step k uses row k % kStepStateRows
  int64_t collected_count_ = 0;    // AdamW's update count after the last collected step
  amp::LossScalerState mirrored_;  // the scaler's state after the last collected step
  std::deque<PendingStep> pending_;
  std::unique_ptr<StepGraphs> graphs_;  // null: every step runs directly
  int64_t reductions_per_step_ = 0;     // bucket reductions the last step not replayed issued
  // The last update zeroed every gradient (unsharded), so the next step starts from zeros
  // without a pass of its own. False until then: a backward outside a step may have left some.
  bool grads_zeroed_ = false;
};

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_TRAIN_STEP_H_
