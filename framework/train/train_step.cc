#include "framework/train/train_step.h"

#include <cmath>

#include "framework/core/check.h"
#include "framework/optim/grad_clip.h"

namespace xlmr::train {

int64_t GlobalLossTerms(Objective objective, const std::vector<data::Batch>& micro_batches,
                        int64_t global_examples, distributed::Communicator& comm) {
  // Examples for one loss term each; per-token and span losses count their batches' terms
  // (labelled tokens; a start and an end position per window), summed over the ranks.
  if (objective != Objective::kPerToken && objective != Objective::kSpanStartEnd) return global_examples;
  double terms = 0;
  for (const data::Batch& batch : micro_batches) terms += static_cast<double>(batch.loss_terms);
  if (comm.world_size() > 1) comm.AllReduceSumDoubles(&terms, 1);
  return static_cast<int64_t>(terms);
}

double TrainStep::RunMicroStep(const data::Batch& batch, const PassContext& context,
                               float gradient_scale, bool last) {
  ModelInputs inputs;
  inputs.input_ids = batch.input_ids.ToDevice(settings_.device);
  if (batch.packed()) {
    inputs.cu_seqlens = batch.cu_seqlens;  // stays on the host (ModelInputs' contract)
    inputs.max_seqlen = batch.max_seqlen;
  } else {
    inputs.attention_mask = batch.attention_mask.ToDevice(settings_.device);
  }
  if (batch.token_type_ids.defined()) inputs.token_type_ids = batch.token_type_ids.ToDevice(settings_.device);
  const Tensor labels = batch.labels.ToDevice(settings_.device);
  const Tensor logits = model_.Forward(inputs, context, /*keep_activations=*/true);
  const ops::LossSum loss = ObjectiveLoss(settings_.objective, logits, labels, settings_.label_smoothing);
  const Tensor d_logits =
      ObjectiveBackward(settings_.objective, logits, labels, gradient_scale, settings_.label_smoothing);
  model_.Backward(d_logits, context, sync_.HookFor(last));
  return loss.sum;
}

absl::StatusOr<StepOutcome> TrainStep::Run(int64_t step, const std::vector<data::Batch>& micro_batches,
                                           int64_t global_loss_terms) {
  XLMR_CHECK(global_loss_terms > 0) << "a global batch without loss terms";
  StepOutcome outcome;
  outcome.loss_scale = scaler_.scale();
  outcome.micro_steps = static_cast<int>(micro_batches.size());
  model_.parameters().ZeroGrads();
  sync_.BeginStep();
  // d(mean loss)/d(logits) times the loss scale: the 1/N of the mean over the global batch.
  const float gradient_scale =
      static_cast<float>(outcome.loss_scale / static_cast<double>(global_loss_terms));
  double loss_sum = 0;
  for (size_t m = 0; m < micro_batches.size(); ++m) {
    if (micro_batches[m].labels.numel() == 0) continue;  // a rank's share of a partial batch
    PassContext context;
    context.training = true;
    context.autocast = settings_.autocast;
    context.seed = settings_.seed;
    context.step = static_cast<uint32_t>(step);
    context.micro_step = static_cast<uint32_t>(m);
    loss_sum += RunMicroStep(micro_batches[m], context, gradient_scale, m + 1 == micro_batches.size());
  }
  sync_.Finish();
  distributed::Communicator& comm = sync_.communicator();
  comm.AllReduceSumDoubles(&loss_sum, 1);
  outcome.loss = loss_sum / static_cast<double>(global_loss_terms);

  // The summed gradients this rank holds: all of them, or under ZeRO stage 1 its shard's only.
  const FlatRange owned = sync_.owned();
  Tensor grads = model_.parameters().grads().View(owned.offset, {owned.size});
  // Identical gradients on every rank give identical flags; agreeing explicitly keeps the
  // ranks in lockstep even if a backend ever reduced non-deterministically. Sharded, each rank
  // sees only its shard, and the agreement is what makes the flag global.
  const bool finite = comm.AllTrue(owned.size == 0 || scaler_.UnscaleAndCheckFinite(grads));
  outcome.skipped = !finite;
  // The schedule advances with updates, not with steps: a skipped step leaves it where it was.
  outcome.learning_rate = schedule_.LearningRate(optimizer_.step_count() + 1);
  if (finite) ApplyUpdate(outcome, grads);
  absl::Status update = scaler_.Update(finite);
  if (!update.ok()) return update;
  return outcome;
}

void TrainStep::ApplyUpdate(StepOutcome& outcome, Tensor& grads) {
  // The norm of the whole gradient: sharded, the sum of every rank's squares.
  double sum_of_squares = optim::SumOfSquares(grads);
  if (sync_.sharded()) sync_.communicator().AllReduceSumDoubles(&sum_of_squares, 1);
  const double norm = std::sqrt(sum_of_squares);
  outcome.grad_norm = norm;
  if (settings_.max_grad_norm > 0 && grads.numel() > 0) optim::ClipGradNorm(grads, norm, settings_.max_grad_norm);
  optimizer_.Step(outcome.learning_rate);  // also refreshes the fp16/bf16 working copy (its shard)
  sync_.AllGatherWeights();                // sharded: every rank gets every shard's new weights
}

}  // namespace xlmr::train
