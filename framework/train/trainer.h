// The training loop of xlmr_finetune, as Hugging Face's Trainer runs it: epochs of shuffled
// global batches, an optimizer step per batch (TrainStep), a metrics line per step, evaluation
// and checkpoints every eval_steps / save_steps (or at each epoch's end), then a final
// evaluation, the final model in output_dir, eval_results.json and a summary line.
//
// Every rank runs the same loop on its shard; only rank 0 writes files and prints.
#ifndef XLMR_FRAMEWORK_TRAIN_TRAINER_H_
#define XLMR_FRAMEWORK_TRAIN_TRAINER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "framework/amp/loss_scaler.h"
#include "framework/data/batch_planner.h"
#include "framework/data/tokenized_dataset.h"
#include "framework/distributed/communicator.h"
#include "framework/profile/profile_window.h"
#include "framework/train/evaluate.h"
#include "framework/train/model_interface.h"
#include "framework/train/training_checkpoint.h"

namespace xlmr::train {

// --eval_strategy / --save_strategy (HF IntervalStrategy).
enum class IntervalStrategy { kNo, kSteps, kEpoch };

// The flags of docs/CONTRACT.md that the loop reads (names and defaults follow HF TrainingArguments).
// These defaults are the flags' defaults: recipes/finetune_flags.cc defines each such flag's
// default as this struct's value (the loss-scale flags: LossScalerOptions'; the evaluation
// batch: EvalSettings'), so that a library caller and the binary cannot disagree, and
// tests/recipes/contract_flags_test.sh holds docs/CONTRACT.md to the binary's defaults.
struct TrainerOptions {
  int64_t per_device_train_batch_size = 8;
  int64_t per_device_eval_batch_size = EvalSettings().batch_size;
  int64_t gradient_accumulation_steps = 1;
  double learning_rate = 2e-5;
  double weight_decay = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.999;
  double adam_epsilon = 1e-8;
  double max_grad_norm = 1.0;
  std::string lr_scheduler_type = "linear";
  std::string lr_scheduler_kwargs;  // JSON object text; empty: none (framework/optim/lr_schedule_kwargs.h)
  double warmup_ratio = 0.0;
  int64_t warmup_steps = 0;
  double num_train_epochs = 3.0;
  int64_t max_steps = -1;
  // PassContext::autocast: kF32 (off), kF16 (--fp16; also switches the loss scaler on) or kBF16
  // (--bf16; no loss scaling). Under kF16 or kBF16 the model's half working copy of the weights
  // must exist (ParameterStore::EnableHalfCopy) when the Trainer is built.
  DType autocast = DType::kF32;
  amp::LossScalerOptions loss_scaler;  // its settings (used only under kF16)
  uint64_t seed = 42;
  Device device = Device::kCpu;
  std::string output_dir = "xlmr_finetune_out";
  // When not empty (--overwrite_output_dir of a non-empty output_dir), rank 0 writes into this
  // directory instead, emptied first, until its first checkpoint is complete; then the staged
  // directory replaces output_dir in one step (io::ReplaceDirectory) and the run writes into
  // output_dir from there on. Until that moment output_dir keeps the old run, whole.
  std::string staging_dir;
  std::string metrics_file;  // empty: <output_dir>/metrics.jsonl
  // --profile_steps: rank 0 records these steps and writes <output_dir>/profile/
  // (framework/profile/profile_files.h) after the window's last step, or when the run ends first.
  profile::ProfileWindow profile;
  int64_t logging_steps = 10;  // log_history entries (framework/train/training_log.h)
  // --report_to=tensorboard: rank 0 writes the log history as a TensorBoard event file into
  // logging_dir (empty: <output_dir>/runs, which moves with a staged output_dir).
  bool report_to_tensorboard = false;
  std::string logging_dir;
  // When to evaluate and to checkpoint during training: kSteps every eval_steps / save_steps
  // (> 0), kEpoch at each epoch's end, kNo never. The last step is always checkpointed and
  // evaluated (after its checkpoint), and a stop (signal, early stopping) always checkpoints.
  IntervalStrategy eval_strategy = IntervalStrategy::kEpoch;
  IntervalStrategy save_strategy = IntervalStrategy::kEpoch;
  int64_t eval_steps = 0;
  int64_t save_steps = 0;
  int save_total_limit = 2;
  // --load_best_model_at_end: the final model is the checkpoint whose evaluation was best by
  // metric_for_best_model (a reported figure without the "eval_" prefix, e.g. "loss",
  // "accuracy"), higher being better when greater_is_better. Needs a LoadModelFn.
  bool load_best_model_at_end = false;
  std::string metric_for_best_model = "loss";
  bool greater_is_better = false;
  // EarlyStoppingCallback: stop after this many evaluations in a row whose metric did not
  // improve on the best by more than the threshold (0: never).
  int64_t early_stopping_patience = 0;
  double early_stopping_threshold = 0.0;
  std::string resume_from_checkpoint;  // a checkpoint directory (already resolved) or empty
  int32_t pad_id = 1;
  // The tokenizer's segment separator when the model reads token types (data::Collate), else -1.
  int32_t segment_separator_id = -1;
  Objective objective = Objective::kSingleLabel;  // the task's loss and metrics
  // Texts per training row (data::RowLayout): 1, or for kInBatchNegatives the (anchor,
  // positive, negatives...) columns, stored column by column; batches, epochs and examples
  // count rows. --similarity_scale: kInBatchNegatives' scale.
  int64_t columns_per_row = 1;
  double similarity_scale = kDefaultSimilarityScale;
  // --mini_batch_size: kInBatchNegatives' cached form (StepSettings::cached_mini_batch_size): texts
  // of one column per pass; 0: off.
  int64_t cached_mini_batch_size = 0;
  // --gather_across_devices: in-batch negatives from every rank's rows (StepSettings::gathered_columns).
  bool gather_across_devices = false;
  double label_smoothing_factor = 0.0;  // in [0, 1]; 0 with kRegression (framework/train/objective.h)
  std::vector<std::string> label_names = {"LABEL_0", "LABEL_1"};  // in id order
  bool group_by_length = false;  // batches of similar length (HF LengthGroupedSampler)
  // --padding_free: each training micro-batch is packed (data::CollatePacked: the same examples
  // in the same order, T real tokens, no padding) wherever the model takes packed inputs
  // (TrainableModel::TakesPackedInputs); elsewhere it is padded and the run says so once on
  // stderr. Same masks, same losses and weights up to rounding (docs/CONTRACT.md).
  bool padding_free = true;
  // --cuda_graphs: StepSettings::cuda_graphs (framework/train/step_graphs.h).
  bool cuda_graphs = true;
  // --zero_stage: 0 keeps the whole optimizer state on every rank (gradients all-reduced); 1
  // keeps each rank's 1/N shard of the AdamW moments (gradients reduce-scattered, weights
  // all-gathered after the update: framework/distributed/zero_partition.h). Checkpoints are
  // the same either way.
  int zero_stage = 0;
};

// Reads the weights of the model directory `directory` (written by a SaveModelFn) into the
// model being trained.
using LoadModelFn = std::function<absl::Status(const std::string& directory)>;

// Evaluates `data` (the eval or the test data set given to the Trainer; `split` is "eval" or
// "test") with the model as it is. Null: Evaluate (evaluate.h) under the run's settings. A task
// whose figures need more than the data set (question answering: the examples behind the
// windows, qa_evaluate.h) passes its own; every rank calls it at the same points. The files its
// result names (EvalResult::write_files) are written for the final evaluations only.
using EvaluateFn =
    std::function<EvalResult(const data::TokenizedDataset& data, const std::string& split)>;

// The settings of every evaluation the Trainer runs (eval and test data) under `options`.
EvalSettings EvalSettingsFor(const TrainerOptions& options);

class Trainer {
 public:
  // `eval_data` and `test_data` may be null. `save_model` writes the model as a HF directory
  // and names its files (the final model's manifest.json lists them with eval_results.json).
  Trainer(TrainableModel& model, const data::TokenizedDataset& train_data,
          const data::TokenizedDataset* eval_data, const data::TokenizedDataset* test_data,
          TrainerOptions options, distributed::Communicator& comm, SaveModelFn save_model,
          LoadModelFn load_model = nullptr, EvaluateFn evaluate = nullptr);

  // Trains (resuming when options.resume_from_checkpoint is set), evaluates and saves.
  // A stop signal (framework/train/stop_signal.h) received by any rank ends the run after the
  // current optimizer step: every rank learns of it at the same step (one all-reduce of a
  // flag per step), a checkpoint of that step is saved, and Train returns Cancelled with the
  // line to print; stopped_by_signal() then names the signal.
  absl::Status Train();
  int stopped_by_signal() const { return stopped_by_signal_; }

  // Optimizer steps per epoch and in total, as HF computes them.
  int64_t steps_per_epoch() const;
  int64_t total_steps() const;

 private:
  class Run;  // the state of one Train() call (defined in trainer.cc)

  TrainableModel& model_;
  const data::TokenizedDataset& train_data_;
  const data::TokenizedDataset* eval_data_;
  const data::TokenizedDataset* test_data_;
  TrainerOptions options_;
  distributed::Communicator& comm_;
  SaveModelFn save_model_;
  LoadModelFn load_model_;
  EvaluateFn evaluate_;  // never null once built (the default wraps Evaluate)
  int stopped_by_signal_ = 0;
  // Built once from options_ and comm_: the batch planner's input, and the one place the
  // global batch size and the steps per epoch come from.
  data::BatchPlanOptions batch_plan_;
};

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_TRAINER_H_
