// Learning-rate schedules of Hugging Face Transformers (transformers.get_scheduler), as the
// Trainer drives them: optimizer step s (1-based) runs with base_lr * lambda(s - 1), because
// the Trainer calls scheduler.step() after optimizer.step(), so the first step uses lambda(0)
// (0 under warmup). With W warmup steps, T total steps, k = s - 1 and the arguments of
// --lr_scheduler_kwargs (lr_schedule_kwargs.h), lambda(k) is transformers' lr_lambda:
//   warmup(k)             k / max(1, W)   (while k < W, for every type below that warms up)
//   linear                max(0, (T - k) / max(1, T - W))
//   cosine                with p = (k - W) / max(1, T - W): max(0, 0.5 (1 + cos(pi num_cycles 2 p)))
//   cosine_with_restarts  p as cosine; p >= 1: 0; else max(0, 0.5 (1 + cos(pi ((num_cycles p) % 1))))
//   polynomial            k > T: lr_end / base_lr; else with q = 1 - (k - W) / (T - W):
//                         ((base_lr - lr_end) q^power + lr_end) / base_lr
//   constant              1 (HF's get_constant_schedule ignores warmup; so do we)
//   constant_with_warmup  1
//   inverse_sqrt          1 / sqrt((k + timescale - W) / timescale)
//   cosine_with_min_lr    r + (1 - r) * (cosine's factor before its max), r = min_lr_rate, max 0
//   cosine_warmup_with_min_lr  its own warmup: (k + 1) / max(1, W), or with warmup_lr_rate w:
//                         w + (1 - w) k / max(1, W - 1); then as cosine_with_min_lr with
//                         p = (k - W + 1) / max(1, T - W)
//   warmup_stable_decay   k < W: shape(k / max(1, W)) scaled into [m, 1] (m = min_lr_ratio);
//                         k < W + S: 1; k < W + S + D: the decay shape of
//                         (k - W - S) / max(1, D) scaled into [m, 1]; after: m
// Everything is computed in double in HF's operation order, so the rates equal the Python
// floats HF produces (the learning rate of a torch param_group is a Python float) up to the
// last bit of cos, sqrt and pow, which libm builds may round differently.
#ifndef XLMR_FRAMEWORK_OPTIM_LR_SCHEDULE_H_
#define XLMR_FRAMEWORK_OPTIM_LR_SCHEDULE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/optim/lr_schedule_kwargs.h"
#include "framework/optim/lr_schedule_type.h"

namespace xlmr::optim {

// HF's TrainingArguments.get_warmup_steps: warmup_steps when > 0, else
// ceil(total_steps * warmup_ratio) in double (so 100 * 0.07 = 7.000000000000001 gives 8).
int64_t ResolveWarmupSteps(int64_t total_steps, int64_t warmup_steps, double warmup_ratio);

class LrSchedule {
 public:
  // Arguments already validated (checked): base_lr finite >= 0, total_steps >= 1,
  // warmup_steps >= 0, kwargs from ParseLrScheduleKwargs. Use MakeLrSchedule for user input.
  LrSchedule(LrScheduleType type, double base_lr, int64_t total_steps, int64_t warmup_steps,
             const LrScheduleKwargs& kwargs = {});

  // The rate of optimizer step `step` (1-based, >= 1; steps past total_steps follow the same
  // formula, so linear stays at 0). A double: AdamW forms lr / (1 - beta1^t) in double.
  double LearningRate(int64_t step) const;

  LrScheduleType type() const { return type_; }
  double base_lr() const { return base_lr_; }
  int64_t total_steps() const { return total_steps_; }
  // The warmup the schedule applies (0 for "constant", which ignores warmup).
  int64_t warmup_steps() const { return warmup_steps_; }

 private:
  // HF's lr_lambda(current_step), current_step = step - 1, one function per family.
  double Multiplier(int64_t current_step) const;
  double WarmupMultiplier(int64_t current_step) const;
  double CosineFactor(double progress) const;  // 0.5 (1 + cos(pi num_cycles 2 progress))
  double PolynomialMultiplier(int64_t current_step) const;
  double CosineWarmupWithMinLrMultiplier(int64_t current_step) const;
  double WarmupStableDecayMultiplier(int64_t current_step) const;

  LrScheduleType type_;
  double base_lr_;
  int64_t total_steps_;
  int64_t warmup_steps_;
  LrScheduleKwargs kwargs_;  // timescale and num_stable_steps resolved
};

// Validates the flags and builds the schedule. `type` is --lr_scheduler_type
// (lr_schedule_type.h); base_lr is --learning_rate; total_steps is the number of optimizer
// steps of the run (from --max_steps or --num_train_epochs); warmup_steps/warmup_ratio are
// --warmup_steps (>= 0) and --warmup_ratio (in [0, 1]); kwargs_json is --lr_scheduler_kwargs.
// Errors are one line naming the flag and the expected value.
absl::StatusOr<LrSchedule> MakeLrSchedule(absl::string_view type, double base_lr,
                                          int64_t total_steps, int64_t warmup_steps,
                                          double warmup_ratio, absl::string_view kwargs_json = "");

}  // namespace xlmr::optim

#endif  // XLMR_FRAMEWORK_OPTIM_LR_SCHEDULE_H_
