#include "framework/train/train_step.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "framework/core/check.h"
#include "framework/data/batch_slice.h"
#include "framework/ops/elementwise.h"
#include "framework/ops/step_decisions.h"
#include "framework/ops/step_graph.h"
#include "framework/profile/profiler.h"
#include "framework/train/gathered_rows.h"
#include "framework/train/model_inputs.h"
#include "kernels/common/step_state.h"

namespace xlmr::train {

int64_t GlobalLossTerms(Objective objective, const std::vector<data::Batch>& micro_batches,
                        int64_t global_examples, distributed::Communicator& comm) {
  // Examples for one loss term each; per-token, span and scored-pair losses count their
  // batches' terms (labelled tokens; a start and an end position per window; one per non-empty
  // micro-batch), summed over the ranks.
  // The symmetric in-batch loss has two terms per row.
  if (objective == Objective::kSymmetricInBatchNegatives) return 2 * global_examples;
  if (objective != Objective::kPerToken && objective != Objective::kSpanStartEnd &&
      objective != Objective::kScoredPairs) {
    return global_examples;
  }
  double terms = 0;
  for (const data::Batch& batch : micro_batches) terms += static_cast<double>(batch.loss_terms);
  if (comm.world_size() > 1) comm.AllReduceSumDoubles(&terms, 1);
  return static_cast<int64_t>(terms);
}

void TrainStep::RunMicroStep(const MicroBatchOnDevice& batch, const PassContext& context, int row, bool last) {
  const Tensor logits = model_.Forward(batch.inputs, context, /*keep_activations=*/true);
  // The loss is summed into the row and the gradient scaled by the row's factor, both on the
  // device: queuing the backward waits for neither.
  AccumulateObjectiveLoss(settings_.objective, logits, batch.labels, settings_.label_smoothing, state_,
                          ops::StepSlotElement(row, kernels::kSlotLossSum), settings_.similarity_scale);
  const ops::GradientScale scale =
      ops::GradientScale::InState(state_, ops::StepSlotElement(row, kernels::kSlotGradientScale));
  const Tensor d_logits = ObjectiveBackward(settings_.objective, logits, batch.labels, scale,
                                            settings_.label_smoothing, settings_.similarity_scale);
  model_.Backward(d_logits, context, sync_.HookFor(last));
}

void TrainStep::RunCachedMicroStep(const data::Batch& batch, const PassContext& context, int row, bool last) {
  // Mini-batches as sentence-transformers cuts them: each column's texts (the batch holds them
  // column by column, data::CollateRows), `size` at a time.
  const int64_t sequences = batch.examples(), rows = batch.labels.numel(), size = settings_.cached_mini_batch_size;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  for (int64_t column = 0; column < sequences; column += rows) {
    for (int64_t begin = column; begin < column + rows; begin += size) ranges.push_back({begin, std::min(begin + size, column + rows)});
  }
  std::vector<data::Batch> minis;
  std::vector<PassContext> contexts;
  for (const auto& [begin, end] : ranges) {
    minis.push_back(data::SliceSequences(batch, begin, end));
    contexts.push_back(context);
    contexts.back().micro_step = context.micro_step + static_cast<uint32_t>(minis.size()) * 65536u;
  }
  // Pass 1: every text's embedding, keeping no activations, into one [sequences, H] tensor.
  Tensor embeddings;
  for (size_t m = 0; m < minis.size(); ++m) {
    const Tensor part = model_.Forward(ToModelInputs(minis[m], settings_.device), contexts[m], /*keep_activations=*/false);
    if (!embeddings.defined()) {
      embeddings = Tensor::Empty({sequences, part.dim(1)}, DType::kF32, settings_.device, MemoryCategory::kActivations);
    }
    Tensor slice = embeddings.Slice(ranges[m].first, ranges[m].second);
    ops::CastInto(part, &slice);
  }
  // The loss and d(loss)/d(embeddings) over the whole micro-batch, as the uncached step takes them.
  const Tensor labels = batch.labels.ToDevice(settings_.device);
  AccumulateObjectiveLoss(settings_.objective, embeddings, labels, 0.0f, state_,
                          ops::StepSlotElement(row, kernels::kSlotLossSum), settings_.similarity_scale);
  const Tensor d_embeddings = ObjectiveBackward(
      settings_.objective, embeddings, labels,
      ops::GradientScale::InState(state_, ops::StepSlotElement(row, kernels::kSlotGradientScale)), 0.0f,
      settings_.similarity_scale);
  embeddings = Tensor();  // pass 2 holds only the gradient
  // Pass 2: each mini-batch again (the same masks), backward from its rows of the gradient.
  for (size_t m = 0; m < minis.size(); ++m) {
    model_.Forward(ToModelInputs(minis[m], settings_.device), contexts[m], /*keep_activations=*/true);
    model_.Backward(d_embeddings.Slice(ranges[m].first, ranges[m].second), contexts[m],
                    sync_.HookFor(last && m + 1 == minis.size()));
  }
}

void TrainStep::RunGatheredMicroStep(const data::Batch& batch, const PassContext& context, int row, bool last) {
  distributed::Communicator& comm = sync_.communicator();
  const bool empty = batch.labels.numel() == 0;
  const Tensor local =
      empty ? Tensor() : model_.Forward(ToModelInputs(batch, settings_.device), context, /*keep_activations=*/true);
  const GatheredRows gathered = GatherRows(local, settings_.gathered_columns, settings_.device, comm);
  if (comm.rank() == 0) {  // every rank holds the global loss; the ranks' sums are added for the log
    AccumulateObjectiveLoss(settings_.objective, gathered.embeddings, gathered.targets, 0.0f, state_,
                            ops::StepSlotElement(row, kernels::kSlotLossSum), settings_.similarity_scale);
  }
  if (empty) return;  // no text of ours to back-propagate
  const Tensor d_global = ObjectiveBackward(
      settings_.objective, gathered.embeddings, gathered.targets,
      ops::GradientScale::InState(state_, ops::StepSlotElement(row, kernels::kSlotGradientScale)), 0.0f,
      settings_.similarity_scale);
  model_.Backward(LocalRows(d_global, gathered, comm), context, sync_.HookFor(last));
}

TrainStep::TrainStep(TrainableModel& model, distributed::GradientSynchronizer& sync,
                     amp::DynamicLossScaler& scaler, optim::AdamW& optimizer,
                     const optim::LrSchedule& schedule, StepSettings settings)
    : model_(model), sync_(sync), scaler_(scaler), optimizer_(optimizer), schedule_(schedule),
      settings_(settings), state_(ops::MakeStepState(settings.device)), reads_(settings.device) {
  if (settings_.cuda_graphs && ops::StepCaptureAvailable(settings_.device)) {
    graphs_ = std::make_unique<StepGraphs>(settings_.device);
  }
}

namespace {

int RowOf(int64_t step) { return static_cast<int>(step % kernels::kStepStateRows); }

}  // namespace

std::string TrainStep::CaptureKey(const std::vector<data::Batch>& micro_batches) const {
  // Steps whose every device input is a micro-batch's inputs and labels (not the cached or
  // gathered in-batch losses, not scored pairs), on one rank, outside a profile window (whose
  // per-op records need the ops run one by one) and with no host callback inside the step.
  const bool capturable = graphs_ != nullptr && sync_.communicator().world_size() == 1 &&
                          !IsInBatchNegatives(settings_.objective) && settings_.objective != Objective::kScoredPairs &&
                          !settings_.on_gradients && !profile::Active();
  return capturable ? StepLayoutKey(micro_batches) : std::string();
}

void TrainStep::Enqueue(int64_t step, const std::vector<data::Batch>& micro_batches,
                        int64_t global_loss_terms) {
  XLMR_CHECK(global_loss_terms > 0) << "a global batch without loss terms";
  XLMR_CHECK(pending() < kernels::kStepStateRows) << "more than " << kernels::kStepStateRows << " steps unread";
  // Rows go round the ring in call order (the step numbers need not be consecutive).
  const int row = RowOf(enqueued_);
  const int previous = RowOf(enqueued_ + kernels::kStepStateRows - 1);
  // The ring starts from the host's state (fresh or restored), and starts again from it when
  // someone changed it since the last read (a RestoreState between steps).
  const amp::LossScalerState scaler = scaler_.GetState();
  if (enqueued_ == 0 || (pending() == 0 && (scaler.scale != mirrored_.scale ||
                                            scaler.growth_tracker != mirrored_.growth_tracker ||
                                            scaler.consecutive_overflows != mirrored_.consecutive_overflows ||
                                            optimizer_.step_count() != collected_count_))) {
    std::vector<double> initial(kernels::kStepSlots, 0.0);
    initial[kernels::kSlotScale] = scaler.scale;
    initial[kernels::kSlotGrowthTracker] = static_cast<double>(scaler.growth_tracker);
    initial[kernels::kSlotConsecutiveOverflows] = static_cast<double>(scaler.consecutive_overflows);
    initial[kernels::kSlotUpdateCount] = static_cast<double>(optimizer_.step_count());
    ops::WriteStepRow(state_, previous, initial);
    collected_count_ = optimizer_.step_count();
    mirrored_ = scaler;
  }
  ++enqueued_;
  const PendingStep record{row, global_loss_terms, static_cast<int>(micro_batches.size())};
  // What the host decides for the step, where its kernels read it.
  kernels::StepInputs inputs;
  inputs.candidates = Candidates();
  inputs.loss_terms = static_cast<double>(global_loss_terms);
  inputs.dropout_step = static_cast<uint32_t>(step);
  if (!grads_zeroed_) model_.parameters().ZeroGrads();
  grads_zeroed_ = false;  // the micro-steps accumulate into them from here

  if (const std::string key = CaptureKey(micro_batches); !key.empty()) {
    QueueCapturedStep(step, row, previous, key, micro_batches, inputs);
  } else {
    ops::WriteStepInputs(state_, row, inputs);
    QueueStep(step, row, previous, static_cast<int>(micro_batches.size()), [&](int m, const PassContext& context, bool last) {
      RunHostMicroStep(micro_batches[m], context, row, last);
    });
  }
  // The update zeroed the gradients it owns; unsharded, that is every gradient (host state,
  // set here rather than in the queued work, which a replay does not run on the host).
  grads_zeroed_ = !sync_.sharded();
  reads_.Queue(state_, row);  // the row's copy for Collect, behind the step's work
  pending_.push_back(record);
}

void TrainStep::QueueCapturedStep(int64_t step, int row, int previous, const std::string& key,
                                  const std::vector<data::Batch>& micro_batches, const kernels::StepInputs& inputs) {
  // The graph works on the two fixed rows past the ring, whatever the step's ring row: the
  // previous row is copied in and the step's row copied out, so one graph serves every step.
  ops::WriteStepInputs(state_, kernels::kCapturedRow, inputs);
  ops::CopyStepRow(state_, previous, kernels::kCapturedPreviousRow);
  distributed::Communicator& comm = sync_.communicator();
  const int64_t calls_before = comm.allreduce_calls(), replays_before = graphs_->replays();
  graphs_->Run(key, micro_batches, [&](const std::vector<MicroBatchOnDevice>& on_device) {
    QueueStep(step, kernels::kCapturedRow, kernels::kCapturedPreviousRow, static_cast<int>(on_device.size()),
              [&](int m, const PassContext& context, bool last) {
                RunMicroStep(on_device[m], context, kernels::kCapturedRow, last);
              });
  });
  ops::CopyStepRow(state_, kernels::kCapturedRow, row);
  // A replay issues the bucket reductions its capture issued, without the host calls that count them.
  if (graphs_->replays() > replays_before) {
    comm.CountReplayedCalls(reductions_per_step_);
  } else {
    reductions_per_step_ = comm.allreduce_calls() - calls_before;
  }
}

void TrainStep::RunHostMicroStep(const data::Batch& batch, const PassContext& context, int row, bool last) {
  if (settings_.gathered_columns > 0 && sync_.communicator().world_size() > 1) {
    RunGatheredMicroStep(batch, context, row, last);  // every rank takes part, even with no rows
  } else if (batch.labels.numel() == 0) {
    return;  // a rank's share of a partial batch
  } else if (settings_.cached_mini_batch_size > 0 && IsInBatchNegatives(settings_.objective)) {
    RunCachedMicroStep(batch, context, row, last);
  } else {
    RunMicroStep({ToModelInputs(batch, settings_.device), batch.labels.ToDevice(settings_.device)}, context, row, last);
  }
}

void TrainStep::QueueStep(int64_t step, int row, int previous, int micro_steps,
                          const std::function<void(int, const PassContext&, bool)>& run_micro_step) {
  // The loss gradient's scale: the loss scale the previous step decided, times the 1/N of the
  // mean over the global batch (d(mean loss)/d(logits) times the loss scale).
  ops::BeginStepState(state_, row, previous);
  sync_.BeginStep();
  for (int m = 0; m < micro_steps; ++m) {
    PassContext context;
    context.training = true;
    context.autocast = settings_.autocast;
    context.seed = settings_.seed;
    context.step = static_cast<uint32_t>(step);
    context.step_on_device = ops::DropoutStepOnDevice(state_, row);
    context.micro_step = static_cast<uint32_t>(m);
    run_micro_step(m, context, m + 1 == micro_steps);
  }
  sync_.Finish();
  model_.ReleaseActivations();  // nothing of the step's passes outlives it

  // The summed gradients this rank holds: all of them, or under ZeRO stage 1 its shard's only.
  const FlatRange owned = sync_.owned();
  Tensor grads = model_.parameters().grads().View(owned.offset, {owned.size});
  // found_inf: this rank's view (nothing for an empty shard), then any rank's. Identical
  // gradients on every rank give identical flags; agreeing explicitly keeps the ranks in
  // lockstep even if a backend ever reduced non-deterministically. Sharded, each rank sees only
  // its shard, and the agreement is what makes the flag global.
  if (settings_.on_gradients) settings_.on_gradients(grads);
  ops::FlagNonFiniteAndSumSquares(grads, state_, row, scaler_.enabled());
  SumOverRanks(row, kernels::kSlotFoundInf);
  if (sync_.sharded()) SumOverRanks(row, kernels::kSlotSumOfSquares);
  ApplyUpdate(row);
  ops::FinishStepState(state_, row, scaler_.rule());
}

ops::AdamWCandidates TrainStep::Candidates() const {
  ops::AdamWCandidates candidates;
  candidates.first_count = collected_count_ + 1;
  candidates.count = pending() + 1;
  for (int i = 0; i < candidates.count; ++i) {
    // The schedule advances with updates, not with steps: a skipped step leaves it where it was.
    const int64_t count = candidates.first_count + i;
    const double lr = schedule_.LearningRate(count);
    XLMR_CHECK(std::isfinite(lr) && lr >= 0.0) << "learning rate " << lr;
    candidates.scalars[i] = optim::ComputeAdamWStepScalars(optimizer_.options(), lr, count);
  }
  return candidates;
}

void TrainStep::SumOverRanks(int row, kernels::StepSlot slot) {
  distributed::Communicator& comm = sync_.communicator();
  if (comm.world_size() == 1) return;
  // Where the state is: host memory on the CPU, on CUDA NCCL's sum on the device (no wait).
  comm.AllReduceSumStateDoubles(state_, ops::StepSlotElement(row, slot), 1);
}

absl::StatusOr<StepOutcome> TrainStep::Collect() {
  XLMR_CHECK(!pending_.empty()) << "no step to collect";
  const PendingStep step = pending_.front();
  pending_.pop_front();
  const std::vector<double> row = reads_.Read(state_, step.row);
  XLMR_CHECK(row[kernels::kSlotCandidateError] == 0.0) << "no AdamW candidate for update count "
                                                       << row[kernels::kSlotCountBefore] + 1;
  // The mean over the global batch: every rank's sum (a host reduction, where the host reads
  // the row anyway), over the global batch's terms.
  double loss_sum = row[kernels::kSlotLossSum];
  sync_.communicator().AllReduceSumDoubles(&loss_sum, 1);
  StepOutcome outcome;
  outcome.loss = loss_sum / static_cast<double>(step.loss_terms);
  outcome.micro_steps = step.micro_steps;
  outcome.loss_scale = row[kernels::kSlotScaleUsed];
  outcome.skipped = row[kernels::kSlotSkipped] != 0.0;
  outcome.learning_rate = schedule_.LearningRate(static_cast<int64_t>(row[kernels::kSlotCountBefore]) + 1);
  // The norm of the whole gradient: sharded, the root of every rank's squares.
  if (!outcome.skipped) outcome.grad_norm = std::sqrt(row[kernels::kSlotSumOfSquares]);
  collected_count_ = static_cast<int64_t>(row[kernels::kSlotUpdateCount]);
  optimizer_.SetStepCount(collected_count_);
  mirrored_ = {static_cast<float>(row[kernels::kSlotScale]), static_cast<int64_t>(row[kernels::kSlotGrowthTracker]),
               static_cast<int64_t>(row[kernels::kSlotConsecutiveOverflows])};
  scaler_.MirrorDeviceState(mirrored_);
  mirrored_ = scaler_.GetState();  // disabled: the scaler keeps scale 1 whatever the row says
  if (row[kernels::kSlotCollapsed] != 0.0) {
    return scaler_.CollapseError(static_cast<float>(row[kernels::kSlotOverflowedAt]),
                                 static_cast<int64_t>(row[kernels::kSlotConsecutiveOverflows]));
  }
  return outcome;
}

absl::StatusOr<StepOutcome> TrainStep::Run(int64_t step, const std::vector<data::Batch>& micro_batches,
                                           int64_t global_loss_terms) {
  Enqueue(step, micro_batches, global_loss_terms);
  return Collect();
}

void TrainStep::ApplyUpdate(int row) {
  // Unscales and clips each raw gradient as it reads it, updates nothing when the row says the
  // step skips, zeroes the gradients it owns, and refreshes the fp16/bf16 working copy (its
  // shard). Unsharded, that is every gradient: the next step need not zero them again.
  optimizer_.StepWithState(state_, row, {scaler_.enabled(), settings_.max_grad_norm});
  // Sharded: every rank gets every shard's new weights (unchanged ones when skipped).
  sync_.AllGatherWeights();
}

}  // namespace xlmr::train
