#include "framework/train/trainer.h"

#include <chrono>
#include <csignal>
#include <cmath>
#include <deque>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/core/status_macros.h"
#include "framework/data/batch_planner.h"
#include "framework/data/column_collate.h"
#include "framework/distributed/gradient_synchronizer.h"
#include "framework/distributed/replica_check.h"
#include "framework/distributed/zero_partition.h"
#include "framework/io/durable_file.h"
#include "framework/io/replace_directory.h"
#include "framework/optim/adamw.h"
#include "framework/optim/lr_schedule.h"
#include "framework/profile/profiler.h"
#include "framework/profile/window_recorder.h"
#include "framework/tensor/storage.h"
#include "framework/train/metrics_writer.h"
#include "framework/train/progress.h"
#include "framework/train/run_results.h"
#include "framework/train/run_record.h"
#include "framework/train/step_line.h"
#include "framework/train/stop_signal.h"
#include "framework/train/train_step.h"
#include "framework/train/training_log.h"

namespace xlmr::train {

namespace {

// --zero_stage=1: the shards of the flat buffers over the ranks (framework/distributed/zero_partition.h).
std::optional<distributed::ZeroPartition> ZeroPartitionFor(int zero_stage, const distributed::Communicator& comm,
                                                           const ParameterStore& store) {
  if (zero_stage == 0) return std::nullopt;
  return distributed::ZeroPartition(store.total_elements(), comm.world_size());
}

FlatRange OptimizerShard(const std::optional<distributed::ZeroPartition>& partition, int rank,
                         const ParameterStore& store) {
  return partition ? partition->shard(rank) : FlatRange{0, store.total_elements()};
}

}  // namespace

// Everything one Train() call builds and advances.
class Trainer::Run {
 public:
  explicit Run(Trainer& t)
      : t_(t),
        options_(t.options_),
        is_main_(t.comm_.rank() == 0),
        write_dir_(options_.staging_dir.empty() ? options_.output_dir : options_.staging_dir),
        partition_(ZeroPartitionFor(options_.zero_stage, t.comm_, t.model_.parameters())),
        optimizer_(t.model_.parameters(),
                   optim::AdamWOptions{options_.adam_beta1, options_.adam_beta2, options_.adam_epsilon,
                                       options_.weight_decay},
                   OptimizerShard(partition_, t.comm_.rank(), t.model_.parameters())),
        scaler_(options_.loss_scaler, /*enabled=*/options_.autocast == DType::kF16),
        sync_(t.comm_, t.model_.parameters(), partition_),
        progress_(Progress::ForStderr(options_.logging_steps, is_main_)),
        profiler_(options_.profile, options_.device, write_dir_ + "/profile", "xlmr_finetune",
                  [this](const std::string& line) { progress_.Message(line); }, is_main_) {}

  absl::Status Execute();

 private:
  absl::Status Prepare();
  absl::Status RestoreFromCheckpoint();
  absl::Status EnqueueStep();
  absl::Status RecordQueuedSteps(bool all);
  absl::Status FinishRun();
  absl::StatusOr<FinalModel> LoadBestModel();
  absl::Status EvaluateAndRecord(bool final_evaluation);
  bool EvalDue() const;
  bool SaveDue() const;
  absl::Status TrackBest();
  std::string CheckpointPath(int64_t step) const { return absl::StrCat(options_.output_dir, "/checkpoint-", step); }
  bool EarlyStopped() const {
    return options_.early_stopping_patience > 0 &&
           state_.early_stopping_patience_counter >= options_.early_stopping_patience;
  }
  absl::Status SaveCheckpoint();
  absl::Status PublishStagedOutput();
  absl::Status CheckReplicasAgree(const std::string& when);
  int AgreedStopSignal();
  // How many queued steps may wait unread: the host runs this far ahead of the device.
  static constexpr int kStepsAhead = 2;
  absl::Status RecordStep(const StepOutcome& outcome, const StepLine& line);
  // --profile_steps, on rank 0 (into write_dir_, which a publish may change).
  absl::Status FinishProfile() {
    profiler_.set_directory(write_dir_ + "/profile");
    return profiler_.Finish();
  }
  absl::Status WriteMetrics(const nlohmann::ordered_json& record);
  TrainingState CurrentSettings() const;
  // Counters that continue across a resume.
  int64_t AllReduceCalls() const { return state_.allreduce_calls + t_.comm_.allreduce_calls(); }
  double ElapsedSeconds() const {
    return state_.train_seconds + std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  double Epoch() const {
    return static_cast<double>(state_.epoch) +
           static_cast<double>(state_.step_in_epoch) / static_cast<double>(t_.steps_per_epoch());
  }

  Trainer& t_;
  const TrainerOptions& options_;
  bool is_main_;
  std::string write_dir_;  // where rank 0 writes: the staging directory until it is published
  std::optional<distributed::ZeroPartition> partition_;  // --zero_stage=1 only
  optim::AdamW optimizer_;  // of this rank's shard under --zero_stage=1
  amp::DynamicLossScaler scaler_;
  distributed::GradientSynchronizer sync_;
  std::optional<data::BatchPlanner> planner_;
  Progress progress_;
  std::optional<optim::LrSchedule> schedule_;
  std::optional<TrainStep> step_;  // from the first step on: it holds the device's step decisions
  std::deque<StepLine> queued_;  // steps queued, not yet read, oldest first
  std::optional<MetricsWriter> metrics_;
  std::optional<TrainingLog> log_;
  TrainingState state_;
  std::chrono::steady_clock::time_point start_;
  bool epoch_just_ended_ = false;
  bool packed_ = false;  // --padding_free and the model takes packed inputs
  profile::WindowRecorder profiler_;
  std::optional<EvalResult> last_eval_;
  int64_t last_eval_step_ = -1;  // the step of last_eval_
};

TrainingState Trainer::Run::CurrentSettings() const {
  TrainingState s;
  s.seed = options_.seed;
  s.global_batch_size = t_.batch_plan_.global_batch_size();
  s.train_examples = data::RowLayout{options_.columns_per_row}.Rows(t_.train_data_);
  s.world_size = t_.comm_.world_size();
  return s;
}

absl::Status Trainer::Run::Prepare() {
  XLMR_ASSIGN_OR_RETURN(schedule_, optim::MakeLrSchedule(options_.lr_scheduler_type, options_.learning_rate,
                                                         t_.total_steps(), options_.warmup_steps,
                                                         options_.warmup_ratio, options_.lr_scheduler_kwargs));
  XLMR_ASSIGN_OR_RETURN(planner_, data::BatchPlanner::Create(t_.batch_plan_));
  packed_ = options_.padding_free && t_.model_.TakesPackedInputs(options_.autocast);
  if (options_.padding_free && !packed_) {
    progress_.Message(
        "--padding_free: this model's attention has no variable-length form here (eager "
        "attention, or no fused kernel for this device and dtype); training on padded batches");
  }
  state_ = CurrentSettings();
  const bool resuming = !options_.resume_from_checkpoint.empty();
  if (resuming) XLMR_RETURN_IF_ERROR(RestoreFromCheckpoint());
  std::error_code error;
  if (is_main_ && write_dir_ != options_.output_dir) std::filesystem::remove_all(write_dir_, error);  // a dead run's
  if (is_main_) std::filesystem::create_directories(write_dir_, error);
  if (error) return absl::PermissionDeniedError(absl::StrCat("--output_dir=", write_dir_, ": ", error.message()));
  if (is_main_) {
    for (const std::string& name : RemoveTemporaryCheckpoints(write_dir_)) {
      progress_.Message(absl::StrCat("removed ", write_dir_, "/", name, ", left by a run stopped while saving"));
    }
  }
  // The file follows its directory when the staging directory is published (same inode).
  const std::string metrics_path =
      options_.metrics_file.empty() ? write_dir_ + "/metrics.jsonl" : options_.metrics_file;
  if (resuming && is_main_) {
    // Lines the killed run wrote after its checkpoint are written again by this run. The last
    // step evaluates after its checkpoint, every other step before it.
    XLMR_ASSIGN_OR_RETURN(const int64_t dropped,
                          TruncateMetricsForResume(metrics_path, state_.global_step,
                                                   state_.global_step < t_.total_steps()));
    if (dropped > 0) {
      progress_.Message(absl::StrCat(metrics_path, ": dropped ", dropped, " lines written after step ",
                                     state_.global_step, "'s checkpoint (they are written again)"));
    }
  }
  XLMR_ASSIGN_OR_RETURN(MetricsWriter metrics, MetricsWriter::Open(metrics_path, resuming, is_main_));
  metrics_.emplace(std::move(metrics));
  if (metrics_->started_empty()) XLMR_RETURN_IF_ERROR(WriteMetrics(RunRecord()));
  std::optional<TensorBoardWriter> tensorboard;
  if (is_main_ && options_.report_to_tensorboard) {
    const std::string logging_dir = options_.logging_dir.empty() ? write_dir_ + "/" + kDefaultLoggingDirName : options_.logging_dir;
    XLMR_ASSIGN_OR_RETURN(TensorBoardWriter writer, TensorBoardWriter::Open(logging_dir, resuming, state_.log_history));
    if (writer.dropped_events() > 0) {
      progress_.Message(absl::StrCat(writer.path(), ": dropped ", writer.dropped_events(), " events written after step ",
                                     state_.global_step, "'s checkpoint (they are written again)"));
    }
    tensorboard.emplace(std::move(writer));
  }
  log_.emplace(options_.logging_steps, std::move(tensorboard));
  return absl::OkStatus();
}

// --resume_from_checkpoint: after checking that the checkpoint suits this run's settings
// (CheckCompatible), its state (counters, best metric, log history), the AdamW moments and step
// count and the loss scale replace the fresh ones. The weights are the model's (it is built from
// the checkpoint before the Trainer).
absl::Status Trainer::Run::RestoreFromCheckpoint() {
  // Checkpoints hold the moments packed (no alignment padding): see ParameterStore.
  const ParameterStore& store = t_.model_.parameters();
  XLMR_ASSIGN_OR_RETURN(LoadedCheckpoint loaded,
                        LoadTrainingCheckpoint(options_.resume_from_checkpoint, store.packed_elements()));
  XLMR_RETURN_IF_ERROR(CheckCompatible(loaded.state, state_, options_.resume_from_checkpoint));
  if (loaded.state.world_size != 0 && loaded.state.world_size != state_.world_size) {
    progress_.Message(absl::StrCat(
        options_.resume_from_checkpoint, " was saved by ", loaded.state.world_size, " ranks, resumed by ",
        state_.world_size, ": the global batch is still ", state_.global_batch_size,
        " (per_device_train_batch_size ", options_.per_device_train_batch_size, " x gradient_accumulation_steps ",
        options_.gradient_accumulation_steps, " x ", state_.world_size, state_.world_size == 1 ? " rank)" : " ranks)"));
  }
  loaded.state.world_size = state_.world_size;  // this run's checkpoints record its own
  state_ = loaded.state;
  Tensor exp_avg = Tensor::Zeros({store.total_elements()}, DType::kF32, Device::kCpu, MemoryCategory::kOptimizer);
  Tensor exp_avg_sq = Tensor::Zeros({store.total_elements()}, DType::kF32, Device::kCpu, MemoryCategory::kOptimizer);
  store.ScatterPacked(loaded.exp_avg, exp_avg);
  store.ScatterPacked(loaded.exp_avg_sq, exp_avg_sq);
  XLMR_RETURN_IF_ERROR(optimizer_.RestoreState(loaded.state.optimizer_steps, exp_avg, exp_avg_sq));
  amp::LossScalerState scaler = scaler_.GetState();
  scaler.scale = static_cast<float>(loaded.state.loss_scale);
  scaler.growth_tracker = loaded.state.loss_scale_growth_tracker;
  XLMR_RETURN_IF_ERROR(scaler_.RestoreState(scaler));
  // A run stopped early was checkpointed after the evaluation that stopped it (recorded).
  if (EarlyStopped()) last_eval_step_ = state_.global_step;
  return absl::OkStatus();
}

// Queues optimizer step state_.global_step + 1 and advances the counters that do not depend
// on its outcome; its metrics line waits in queued_ with what the host knows now.
absl::Status Trainer::Run::EnqueueStep() {
  const data::StepAssignment assignment = planner_->Assign(state_.epoch, state_.step_in_epoch);
  std::vector<data::Batch> micro_batches;
  double local_tokens = 0;
  for (const std::vector<int64_t>& indices : assignment.micro_batches) {
    micro_batches.push_back(data::CollateRows(t_.train_data_, indices, {options_.columns_per_row}, packed_,
                                              options_.pad_id, options_.segment_separator_id));
    local_tokens += static_cast<double>(micro_batches.back().tokens);
  }
  const int64_t loss_terms =
      GlobalLossTerms(options_.objective, micro_batches, assignment.global_examples, t_.comm_);
  MemoryStatsFor(options_.device).ResetPeaks();
  AllocatorFor(options_.device).ResetPeakReserved();
  const int64_t step_number = state_.global_step + 1;  // as metrics.jsonl numbers it
  const profile::LaunchCounts launches_before = profile::CountLaunches(options_.device);
  std::optional<profile::StepScope> step_scope = profiler_.BeginStep(step_number);
  const auto begin = std::chrono::steady_clock::now();
  if (!step_) step_.emplace(t_.model_, sync_, scaler_, optimizer_, *schedule_, StepSettings{options_.autocast,
      options_.max_grad_norm, options_.seed, options_.device, options_.objective, static_cast<float>(options_.label_smoothing_factor),
      nullptr, static_cast<float>(options_.similarity_scale), options_.cached_mini_batch_size,
      options_.gather_across_devices ? options_.columns_per_row : 0, options_.cuda_graphs});
  step_->Enqueue(state_.global_step, micro_batches, loss_terms);
  t_.comm_.AllReduceSumDoubles(&local_tokens, 1);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  step_scope.reset();

  ++state_.global_step;
  state_.examples_seen += assignment.global_examples;
  state_.tokens_seen += static_cast<int64_t>(local_tokens);
  epoch_just_ended_ = ++state_.step_in_epoch == t_.steps_per_epoch();
  if (epoch_just_ended_) {
    ++state_.epoch;
    state_.step_in_epoch = 0;
  }
  queued_.push_back(StartStepLine({state_.global_step, Epoch(), state_.examples_seen, state_.tokens_seen,
                                    AllReduceCalls(), static_cast<int64_t>(local_tokens), seconds,
                                    profile::LaunchesSince(launches_before, options_.device)},
                                   options_.device));
  profiler_.EndStep(step_number);
  return profiler_.has_finished_window() ? FinishProfile() : absl::OkStatus();
}

// Reads the outcomes of queued steps and writes their lines: every one when `all`, else
// those beyond kStepsAhead (a fixed number, the same on every rank: reading sums the loss
// over the ranks).
absl::Status Trainer::Run::RecordQueuedSteps(bool all) {
  while (!queued_.empty() && (all || static_cast<int>(queued_.size()) > kStepsAhead)) {
    const profile::LaunchCounts before = profile::CountLaunches(options_.device);
    const auto begin = std::chrono::steady_clock::now();
    XLMR_ASSIGN_OR_RETURN(const StepOutcome outcome, step_->Collect());
    const double read_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    StepLine line = std::move(queued_.front());
    queued_.pop_front();
    state_.skipped_steps += outcome.skipped ? 1 : 0;
    state_.optimizer_steps = optimizer_.step_count();
    CompleteStepLine(line, outcome, read_seconds, profile::LaunchesSince(before, options_.device), ElapsedSeconds());
    XLMR_RETURN_IF_ERROR(RecordStep(outcome, line));
  }
  return absl::OkStatus();
}

absl::Status Trainer::Run::RecordStep(const StepOutcome& outcome, const StepLine& line) {
  XLMR_RETURN_IF_ERROR(WriteMetrics(line.record));
  const std::optional<double> loss_scale =
      options_.autocast == DType::kF16 ? std::optional<double>(outcome.loss_scale) : std::nullopt;
  XLMR_RETURN_IF_ERROR(log_->OnStep(state_, line.step,
                                    LoggedStep{outcome.loss, outcome.grad_norm, outcome.learning_rate, loss_scale},
                                    line.epoch));
  progress_.Update({line.step, t_.total_steps(), line.epoch, outcome.loss, outcome.learning_rate,
                    line.record["tokens_per_second"].get<double>(), line.record["elapsed_seconds"].get<double>(),
                    outcome.skipped});
  return absl::OkStatus();
}

// A record that did not reach metrics.jsonl stops the run (rank 0 writes; the caller's error
// path stops the other ranks), as a failed checkpoint save does: lines lost without a word
// would leave a run whose file no longer shows what it did.
absl::Status Trainer::Run::WriteMetrics(const nlohmann::ordered_json& record) {
  const absl::Status written = metrics_->Write(record);
  if (written.ok()) return written;
  return absl::DataLossError(absl::StrCat(written.message(), "; the run stopped"));
}

absl::Status Trainer::Run::EvaluateAndRecord(bool final_evaluation) {
  if (t_.eval_data_ == nullptr) return absl::OkStatus();
  last_eval_ = t_.evaluate_(*t_.eval_data_, "eval");
  nlohmann::ordered_json record = {{"type", "eval"}, {"step", state_.global_step}, {"epoch", Epoch()}};
  last_eval_step_ = state_.global_step;
  record.update(EvalRecord(*last_eval_, "eval"));
  XLMR_RETURN_IF_ERROR(WriteMetrics(record));
  XLMR_RETURN_IF_ERROR(log_->OnEvaluate(state_, last_eval_->loss, last_eval_->metrics, Epoch()));
  if (!final_evaluation) {
    std::string figures = absl::StrFormat("loss %.4f", last_eval_->loss);
    for (const auto& [name, value] : last_eval_->metrics) absl::StrAppendFormat(&figures, ", %s %.4f", name, value);
    progress_.Message(absl::StrFormat("eval at step %d: %s", state_.global_step, figures));
  }
  return absl::OkStatus();
}

bool Trainer::Run::EvalDue() const {
  switch (options_.eval_strategy) {
    case IntervalStrategy::kNo: return false;
    case IntervalStrategy::kSteps: return state_.global_step % options_.eval_steps == 0;
    case IntervalStrategy::kEpoch: return epoch_just_ended_;
  }
  return false;
}

bool Trainer::Run::SaveDue() const {
  switch (options_.save_strategy) {
    case IntervalStrategy::kNo: return false;
    case IntervalStrategy::kSteps: return state_.global_step % options_.save_steps == 0;
    case IntervalStrategy::kEpoch: return epoch_just_ended_;
  }
  return false;
}

// After an evaluation at state_.global_step, with --load_best_model_at_end: EarlyStoppingCallback
// (against the best before this evaluation: HF runs the callback first), then
// Trainer._determine_best_metric. The checkpoint of a new best is named when it is saved.
absl::Status Trainer::Run::TrackBest() {
  if (!options_.load_best_model_at_end || !last_eval_.has_value()) return absl::OkStatus();
  const std::string& name = options_.metric_for_best_model;
  const std::optional<double> value = name == "loss" ? std::optional<double>(last_eval_->loss) : last_eval_->Metric(name);
  if (!value.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("--metric_for_best_model=", name, ": the evaluation at step ",
                                                   state_.global_step, " did not report eval_", name));
  }
  const auto better = [&](double a, double b) { return options_.greater_is_better ? a > b : a < b; };
  if (options_.early_stopping_patience > 0) {
    const bool improved = !state_.best_metric.has_value() ||
                          (better(*value, *state_.best_metric) &&
                           std::abs(*value - *state_.best_metric) > options_.early_stopping_threshold);
    state_.early_stopping_patience_counter = improved ? 0 : state_.early_stopping_patience_counter + 1;
  }
  const double best_so_far = state_.best_metric.value_or(options_.greater_is_better ? -INFINITY : INFINITY);
  state_.best_metric = best_so_far;
  if (better(*value, best_so_far)) {
    state_.best_metric = *value;
    state_.best_global_step = state_.global_step;
  }
  return absl::OkStatus();
}

absl::Status Trainer::Run::SaveCheckpoint() {
  if (state_.best_global_step == state_.global_step) state_.best_model_checkpoint = CheckpointPath(state_.global_step);
  TrainingState saved = state_;
  saved.allreduce_calls = AllReduceCalls();
  saved.train_seconds = ElapsedSeconds();
  const amp::LossScalerState scaler = scaler_.GetState();
  saved.loss_scale = scaler.scale;
  saved.loss_scale_growth_tracker = scaler.growth_tracker;
  absl::Status status = absl::OkStatus();
  // --zero_stage=1: the moments are gathered whole on rank 0, so optimizer.safetensors has the
  // layout every world size reads (docs/DECISIONS.md). A collective: every rank takes part.
  Tensor exp_avg = optimizer_.exp_avg(), exp_avg_sq = optimizer_.exp_avg_sq();
  if (partition_) {
    exp_avg = distributed::GatherShardsToRoot(t_.comm_, *partition_, exp_avg, /*root=*/0);
    exp_avg_sq = distributed::GatherShardsToRoot(t_.comm_, *partition_, exp_avg_sq, /*root=*/0);
  }
  if (is_main_) {
    // Packed: the checkpoint layout does not depend on the store's alignment padding. The
    // parameters' ranges are written straight from the flat moments: a packed copy of both
    // would add their size to the run's peak memory at every checkpoint.
    const ParameterStore& store = t_.model_.parameters();
    std::vector<io::ElementRange> ranges;
    for (int i = 0; i < store.size(); ++i) ranges.push_back({store.range(i).offset, store.range(i).size});
    status = SaveTrainingCheckpoint(write_dir_, saved, exp_avg, exp_avg_sq, t_.save_model_,
                                    options_.save_total_limit, ranges);
    if (status.ok()) status = PublishStagedOutput();
  }
  t_.comm_.Barrier();  // no rank runs ahead of a checkpoint in progress
  return status;
}

// Rank 0, after a checkpoint is complete: the staged run takes output_dir's place (once).
absl::Status Trainer::Run::PublishStagedOutput() {
  if (write_dir_ == options_.output_dir) return absl::OkStatus();
  XLMR_RETURN_IF_ERROR(io::ReplaceDirectory(write_dir_, options_.output_dir));
  XLMR_RETURN_IF_ERROR(io::SyncParentDirectory(options_.output_dir));  // the exchanged names, on disk
  write_dir_ = options_.output_dir;
  return absl::OkStatus();
}

// With several ranks: stops the run if the ranks' weights are not bitwise identical (the
// replicas diverged, so the saved model would depend on the rank); rank 0 logs the agreement.
absl::Status Trainer::Run::CheckReplicasAgree(const std::string& when) {
  if (t_.comm_.world_size() == 1) return absl::OkStatus();
  XLMR_ASSIGN_OR_RETURN(const uint64_t fingerprint,
                        distributed::CheckReplicasIdentical(t_.comm_, t_.model_.parameters().master(), when));
  progress_.Message(absl::StrFormat("weights identical on all %d ranks %s (fingerprint %016x)",
                                    t_.comm_.world_size(), when, fingerprint));
  return absl::OkStatus();
}

// The stop signal any rank received, the same on every rank (SIGTERM over SIGINT): a
// collective, so all ranks stop after the same step and save the same checkpoint.
int Trainer::Run::AgreedStopSignal() {
  const int local = StopSignalReceived();
  double votes[2] = {local == SIGTERM ? 1.0 : 0.0, local != 0 && local != SIGTERM ? 1.0 : 0.0};
  if (t_.comm_.world_size() > 1) t_.comm_.AllReduceSumDoubles(votes, 2);
  return votes[0] > 0 ? SIGTERM : votes[1] > 0 ? SIGINT : 0;
}

absl::Status Trainer::Run::Execute() {
  XLMR_RETURN_IF_ERROR(Prepare());
  XLMR_RETURN_IF_ERROR(CheckReplicasAgree("at the start of training"));
  start_ = std::chrono::steady_clock::now();
  while (state_.global_step < t_.total_steps() && !EarlyStopped()) {
    XLMR_RETURN_IF_ERROR(EnqueueStep());
    const bool last = state_.global_step == t_.total_steps();
    const bool eval_due = EvalDue();
    bool save_due = SaveDue();
    // Every queued step is read before anything that needs the weights or counters of this one
    // (an evaluation, a checkpoint, the end) and at logging steps; otherwise the host runs ahead.
    const bool logging_step = state_.global_step % options_.logging_steps == 0;
    XLMR_RETURN_IF_ERROR(RecordQueuedSteps(/*all=*/last || eval_due || save_due || logging_step));
    if (eval_due && !last) {
      XLMR_RETURN_IF_ERROR(EvaluateAndRecord(false));
      XLMR_RETURN_IF_ERROR(TrackBest());
      save_due = save_due || EarlyStopped();  // the run stops here: its checkpoint
    }
    if (save_due || last) XLMR_RETURN_IF_ERROR(SaveCheckpoint());
    if (const int signal_number = AgreedStopSignal(); signal_number != 0) {
      XLMR_RETURN_IF_ERROR(RecordQueuedSteps(/*all=*/true));
      if (!save_due && !last) XLMR_RETURN_IF_ERROR(SaveCheckpoint());
      XLMR_RETURN_IF_ERROR(FinishProfile());
      progress_.Finish();
      t_.stopped_by_signal_ = signal_number;
      return absl::CancelledError(absl::StrCat("stopped by ", StopSignalName(signal_number), " after step ",
                                               state_.global_step, " of ", t_.total_steps(), ": checkpoint-",
                                               state_.global_step, " saved; run the same command again to resume"));
    }
  }
  return FinishRun();
}

// The end of a run that reached its last step or stopped early: the final evaluation (unless
// the last step was just evaluated), the best model (--load_best_model_at_end), the test
// evaluation and the summary line; then rank 0 completes the final model's directory.
absl::Status Trainer::Run::FinishRun() {
  progress_.Finish();
  XLMR_RETURN_IF_ERROR(FinishProfile());  // a run that ended inside the window
  XLMR_RETURN_IF_ERROR(CheckReplicasAgree(absl::StrCat("after step ", state_.global_step)));
  const bool stopped_early = EarlyStopped();
  if (stopped_early) {
    progress_.Message(absl::StrCat("early stopping at step ", state_.global_step, ": ",
                                   state_.early_stopping_patience_counter,
                                   state_.early_stopping_patience_counter == 1 ? " evaluation" : " evaluations",
                                   " without an eval_",
                                   options_.metric_for_best_model, " better than ", *state_.best_metric, " by more than ",
                                   options_.early_stopping_threshold));
  }
  if (last_eval_step_ != state_.global_step) {  // the last step's checkpoint is saved: it holds these weights
    XLMR_RETURN_IF_ERROR(EvaluateAndRecord(true));
    XLMR_RETURN_IF_ERROR(TrackBest());
    if (state_.best_global_step == state_.global_step) state_.best_model_checkpoint = CheckpointPath(state_.global_step);
  }
  XLMR_RETURN_IF_ERROR(log_->OnTrainEnd(state_, ElapsedSeconds(), state_.examples_seen, Epoch()));
  XLMR_ASSIGN_OR_RETURN(const FinalModel final_model, LoadBestModel());
  std::optional<EvalResult> test_eval;
  if (t_.test_data_ != nullptr) test_eval = t_.evaluate_(*t_.test_data_, "test");
  const nlohmann::ordered_json results =
      RunResults(state_, final_model, stopped_early, options_.load_best_model_at_end, last_eval_, test_eval);
  const nlohmann::ordered_json summary = SummaryRecord(state_, ElapsedSeconds(), final_model.step, stopped_early,
                                                      options_.early_stopping_patience, results);
  XLMR_RETURN_IF_ERROR(WriteMetrics(summary));
  if (!is_main_) return absl::OkStatus();
  XLMR_ASSIGN_OR_RETURN(std::vector<std::string> files, t_.save_model_(write_dir_));
  XLMR_RETURN_IF_ERROR(WriteFinalFiles(write_dir_, std::move(files), last_eval_, test_eval, state_, results));
  XLMR_RETURN_IF_ERROR(PublishStagedOutput());  // already done at the last checkpoint, which comes first
  progress_.Message(absl::StrCat("done: ", summary.dump()));
  return absl::OkStatus();
}

// The final model: the last step's weights, or under --load_best_model_at_end with eval data
// the best checkpoint's (Trainer._load_best_model), loaded when they are not the last step's;
// either way evaluated again then (last_eval_), as HF evaluates the model it ends with.
absl::StatusOr<FinalModel> Trainer::Run::LoadBestModel() {
  FinalModel final_model{state_.global_step, Epoch()};
  if (options_.load_best_model_at_end && t_.eval_data_ != nullptr) {
    if (!state_.best_model_checkpoint.empty() && state_.best_global_step != state_.global_step) {
      const std::string name = std::filesystem::path(state_.best_model_checkpoint).filename().string();
      progress_.Message(absl::StrCat("loading the best model from ", name, " (eval_", options_.metric_for_best_model,
                                     " ", *state_.best_metric, ")"));
      // Every rank reads it from output_dir: the staged run (if any) was published at the first checkpoint.
      XLMR_RETURN_IF_ERROR(t_.load_model_(options_.output_dir + "/" + name));
      final_model.step = state_.best_global_step;
      final_model.epoch = static_cast<double>(final_model.step) / static_cast<double>(t_.steps_per_epoch());
    }
    last_eval_ = t_.evaluate_(*t_.eval_data_, "eval");
  }
  return final_model;
}

Trainer::Trainer(TrainableModel& model, const data::TokenizedDataset& train_data,
                 const data::TokenizedDataset* eval_data, const data::TokenizedDataset* test_data,
                 TrainerOptions options, distributed::Communicator& comm, SaveModelFn save_model,
                 LoadModelFn load_model, EvaluateFn evaluate)
    : model_(model), train_data_(train_data), eval_data_(eval_data), test_data_(test_data),
      options_(std::move(options)), comm_(comm), save_model_(std::move(save_model)),
      load_model_(std::move(load_model)), evaluate_(std::move(evaluate)) {
  XLMR_CHECK(!options_.load_best_model_at_end || load_model_ != nullptr)
      << "load_best_model_at_end needs a LoadModelFn";
  XLMR_CHECK(options_.autocast == DType::kF32 || model_.parameters().half_dtype() == options_.autocast)
      << "autocast " << DTypeName(options_.autocast) << " needs the model's half working copy of that dtype "
      << "(ParameterStore::EnableHalfCopy) before the Trainer is built";
  XLMR_CHECK(options_.columns_per_row == 1 || !options_.group_by_length) << "group_by_length over rows of several texts";
  batch_plan_ = data::BatchPlanOptions{data::RowLayout{options_.columns_per_row}.Rows(train_data_),
                                       options_.per_device_train_batch_size,
                                       options_.gradient_accumulation_steps, comm_.world_size(),
                                       comm_.rank(), options_.seed, /*shuffle=*/true, {}};
  if (options_.group_by_length) {
    for (int64_t i = 0; i < train_data_.size(); ++i) batch_plan_.lengths.push_back(train_data_.num_tokens(i));
  }
  if (evaluate_ == nullptr) {
    evaluate_ = [this, settings = EvalSettingsFor(options_)](const data::TokenizedDataset& data, const std::string&) {
      return Evaluate(model_, data, options_.label_names, comm_, settings);
    };
  }
}

EvalSettings EvalSettingsFor(const TrainerOptions& options) {
  return EvalSettings{options.per_device_eval_batch_size, options.autocast, options.pad_id, options.device,
                      options.objective, options.label_smoothing_factor, options.padding_free,
                      options.segment_separator_id};
}

int64_t Trainer::steps_per_epoch() const { return batch_plan_.steps_per_epoch(); }

int64_t Trainer::total_steps() const {
  if (options_.max_steps > 0) return options_.max_steps;
  return static_cast<int64_t>(std::ceil(options_.num_train_epochs * static_cast<double>(steps_per_epoch())));
}

absl::Status Trainer::Train() {
  Run run(*this);
  return run.Execute();
}

}  // namespace xlmr::train
