// The run's log history, as Hugging Face's Trainer.log keeps it: TrainingState::log_history
// (saved in every checkpoint's trainer_state.json under that name) receives
//   every --logging_steps steps  {"loss", "grad_norm", "learning_rate", ["loss_scale"], "epoch", "step"}
//   after each evaluation        {"eval_loss", "eval_<metric>"..., "epoch", "step"}
//   at the end of training       {"train_runtime", "train_samples_per_second",
//                                 "train_steps_per_second", "train_loss", "epoch", "step"}
// and each entry goes to TensorBoard too when --report_to=tensorboard (TensorBoardWriter).
// "loss" is the mean of the steps' losses since the previous entry (HF's tr_loss over the
// steps since _globalstep_last_logged); "learning_rate" the rate the logged step used (HF 5.x
// logs the rate read before scheduler.step()); "loss_scale" is ours, under fp16 only.
// Unlike HF, the running sums (the loss since the last entry, and the whole run's for
// train_loss) are kept in the checkpoint, so a resumed run logs what an uninterrupted one does.
#ifndef XLMR_FRAMEWORK_TRAIN_TRAINING_LOG_H_
#define XLMR_FRAMEWORK_TRAIN_TRAINING_LOG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "framework/train/tensorboard_writer.h"
#include "framework/train/training_checkpoint.h"

namespace xlmr::train {

// What a step reports to the log.
struct LoggedStep {
  double loss = 0;
  std::optional<double> grad_norm;   // none when the norm was not computed
  double learning_rate = 0;
  std::optional<double> loss_scale;  // under fp16 only
};

class TrainingLog {
 public:
  // `tensorboard`: where entries also go (none: --report_to=none, or not rank 0).
  TrainingLog(int64_t logging_steps, std::optional<TensorBoardWriter> tensorboard)
      : logging_steps_(logging_steps), tensorboard_(std::move(tensorboard)) {}

  // When optimizer step `step` (1-based) is read, in step order (state.global_step may be ahead:
  // the trainer reads steps late): adds its loss, and at a multiple of logging_steps appends the
  // entry.
  absl::Status OnStep(TrainingState& state, int64_t step, const LoggedStep& logged, double epoch);

  // After an evaluation at state.global_step: the eval entry (metrics in report order).
  absl::Status OnEvaluate(TrainingState& state, double eval_loss,
                          const std::vector<std::pair<std::string, double>>& metrics, double epoch);

  // At the end of training: the summary entry. `train_seconds` over the whole run (resumes
  // included), `train_examples` the examples its steps consumed.
  absl::Status OnTrainEnd(TrainingState& state, double train_seconds, int64_t train_examples, double epoch);

 private:
  absl::Status Append(TrainingState& state, nlohmann::ordered_json entry, int64_t step, double epoch);

  int64_t logging_steps_;
  std::optional<TensorBoardWriter> tensorboard_;
};

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_TRAINING_LOG_H_
