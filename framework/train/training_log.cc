#include "framework/train/training_log.h"

#include "framework/core/status_macros.h"

namespace xlmr::train {

absl::Status TrainingLog::OnStep(TrainingState& state, int64_t step_number, const LoggedStep& step, double epoch) {
  state.logging_loss_sum += step.loss;
  state.total_loss_sum += step.loss;
  ++state.logging_loss_steps;
  if (step_number % logging_steps_ != 0) return absl::OkStatus();
  nlohmann::ordered_json entry = {
      {"loss", state.logging_loss_sum / static_cast<double>(state.logging_loss_steps)}};
  if (step.grad_norm.has_value()) entry["grad_norm"] = *step.grad_norm;
  entry["learning_rate"] = step.learning_rate;
  if (step.loss_scale.has_value()) entry["loss_scale"] = *step.loss_scale;
  state.logging_loss_sum = 0;
  state.logging_loss_steps = 0;
  return Append(state, std::move(entry), step_number, epoch);
}

absl::Status TrainingLog::OnEvaluate(TrainingState& state, double eval_loss,
                                     const std::vector<std::pair<std::string, double>>& metrics, double epoch) {
  nlohmann::ordered_json entry = {{"eval_loss", eval_loss}};
  for (const auto& [name, value] : metrics) entry["eval_" + name] = value;
  return Append(state, std::move(entry), state.global_step, epoch);
}

absl::Status TrainingLog::OnTrainEnd(TrainingState& state, double train_seconds, int64_t train_examples,
                                     double epoch) {
  nlohmann::ordered_json entry = {{"train_runtime", train_seconds}};
  if (train_seconds > 0) {
    entry["train_samples_per_second"] = static_cast<double>(train_examples) / train_seconds;
    entry["train_steps_per_second"] = static_cast<double>(state.global_step) / train_seconds;
  }
  entry["train_loss"] = state.global_step > 0 ? state.total_loss_sum / static_cast<double>(state.global_step) : 0.0;
  return Append(state, std::move(entry), state.global_step, epoch);
}

absl::Status TrainingLog::Append(TrainingState& state, nlohmann::ordered_json entry, int64_t step, double epoch) {
  entry["epoch"] = epoch;
  entry["step"] = step;
  if (tensorboard_.has_value()) XLMR_RETURN_IF_ERROR(tensorboard_->Write(entry));
  state.log_history.push_back(std::move(entry));
  return absl::OkStatus();
}

}  // namespace xlmr::train
