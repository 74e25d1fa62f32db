// Learning-rate schedules of Hugging Face Transformers (transformers.get_scheduler), as the
// Trainer drives them: optimizer step s (1-based) runs with base_lr * lambda(s - 1), because
// the Trainer calls scheduler.step() after optimizer.step(), so the first step uses lambda(0)
// (0 under warmup). With W warmup steps and T total steps, lambda(k) is:
//   linear                k < W: k / max(1, W);  else max(0, (T - k) / max(1, T - W))
//   cosine                k < W: k / max(1, W);  else with p = (k - W) / max(1, T - W):
//                         max(0, 0.5 * (1 + cos(pi * 0.5 * 2 * p)))   (num_cycles = 0.5)
//   constant              1 (HF's get_constant_schedule ignores warmup; so do we)
//   constant_with_warmup  k < W: k / max(1, W);  else 1
// Everything is computed in double in HF's operation order, so the rates equal the Python
// floats HF produces (the learning rate of a torch param_group is a Python float).
#ifndef XLMR_FRAMEWORK_OPTIM_LR_SCHEDULE_H_
#define XLMR_FRAMEWORK_OPTIM_LR_SCHEDULE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlmr::optim {

enum class LrScheduleType { kLinear, kConstant, kConstantWithWarmup, kCosine };

// The --lr_scheduler_type spelling of `type`.
const char* LrScheduleTypeName(LrScheduleType type);

// HF's TrainingArguments.get_warmup_steps: warmup_steps when > 0, else
// ceil(total_steps * warmup_ratio) in double (so 100 * 0.07 = 7.000000000000001 gives 8).
int64_t ResolveWarmupSteps(int64_t total_steps, int64_t warmup_steps, double warmup_ratio);

class LrSchedule {
 public:
  // Arguments already validated (checked): base_lr finite >= 0, total_steps >= 1,
  // warmup_steps >= 0. Use MakeLrSchedule for user input.
  LrSchedule(LrScheduleType type, double base_lr, int64_t total_steps, int64_t warmup_steps);

  // The rate of optimizer step `step` (1-based, >= 1; steps past total_steps follow the same
  // formula, so linear stays at 0). A double: AdamW forms lr / (1 - beta1^t) in double.
  double LearningRate(int64_t step) const;

  LrScheduleType type() const { return type_; }
  double base_lr() const { return base_lr_; }
  int64_t total_steps() const { return total_steps_; }
  // The warmup the schedule applies (0 for "constant", which ignores warmup).
  int64_t warmup_steps() const { return warmup_steps_; }

 private:
  // HF's lr_lambda(current_step), current_step = step - 1.
  double Multiplier(int64_t current_step) const;
  double WarmupMultiplier(int64_t current_step) const;

  LrScheduleType type_;
  double base_lr_;
  int64_t total_steps_;
  int64_t warmup_steps_;
};

// Validates the flags and builds the schedule. `type` is --lr_scheduler_type (linear,
// cosine, constant, constant_with_warmup); base_lr is --learning_rate; total_steps is the
// number of optimizer steps of the run (from --max_steps or --num_train_epochs);
// warmup_steps/warmup_ratio are --warmup_steps (>= 0) and --warmup_ratio (in [0, 1]).
// Errors are one line naming the flag and the expected value.
absl::StatusOr<LrSchedule> MakeLrSchedule(absl::string_view type, double base_lr,
                                          int64_t total_steps, int64_t warmup_steps,
                                          double warmup_ratio);

}  // namespace xlmr::optim

#endif  // XLMR_FRAMEWORK_OPTIM_LR_SCHEDULE_H_
