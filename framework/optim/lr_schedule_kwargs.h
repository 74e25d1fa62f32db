// --lr_scheduler_kwargs: the keyword arguments of transformers' scheduler functions beyond the
// optimizer, warmup and length (TrainingArguments.lr_scheduler_kwargs, a JSON object), by HF's
// names and with HF's defaults. Each schedule type takes exactly its function's arguments:
//   linear, constant, constant_with_warmup   none
//   cosine                    num_cycles [0.5]
//   cosine_with_restarts      num_cycles [1; an integer, the number of hard restarts]
//   polynomial                lr_end [1e-7; below --learning_rate], power [1.0]
//   inverse_sqrt              timescale [the warmup steps, or 10000 without warmup]
//   cosine_with_min_lr        num_cycles [0.5], and exactly one of min_lr (an absolute rate) or
//                             min_lr_rate (a fraction of --learning_rate)
//   cosine_warmup_with_min_lr as cosine_with_min_lr, and warmup_lr_rate [none]
//   warmup_stable_decay       num_decay_steps (required), num_stable_steps [total - warmup -
//                             decay], warmup_type [linear], decay_type [cosine] (each linear,
//                             cosine or 1-sqrt), min_lr_ratio [0], num_cycles [0.5]
// HF's last_epoch is not taken (a resume restores the step count instead).
#ifndef XLMR_FRAMEWORK_OPTIM_LR_SCHEDULE_KWARGS_H_
#define XLMR_FRAMEWORK_OPTIM_LR_SCHEDULE_KWARGS_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/optim/lr_schedule_type.h"

namespace xlmr::optim {

// The curve of warmup_stable_decay's warmup (warmup_type) and decay (decay_type).
enum class WsdShape { kLinear, kCosine, kOneMinusSqrt };

// Every argument of every type, HF's default where one was not given; a type reads only its own.
struct LrScheduleKwargs {
  double num_cycles = 0.5;  // cosine_with_restarts: 1
  double lr_end = 1e-7;
  double power = 1.0;
  std::optional<int64_t> timescale;  // unset: the schedule's default (it needs the warmup)
  double min_lr_rate = 0.0;          // min_lr / --learning_rate when min_lr was given
  std::optional<double> warmup_lr_rate;
  int64_t num_decay_steps = 0;
  std::optional<int64_t> num_stable_steps;  // unset: total - warmup - decay
  WsdShape warmup_type = WsdShape::kLinear;
  WsdShape decay_type = WsdShape::kCosine;
  double min_lr_ratio = 0.0;
};

// Parses `json_text` ("" means {}) for `type`, base_lr being --learning_rate. An argument the
// type does not take, a value of the wrong kind or out of range, a missing required argument or
// text that is not a JSON object: one line naming --lr_scheduler_kwargs.
absl::StatusOr<LrScheduleKwargs> ParseLrScheduleKwargs(LrScheduleType type,
                                                      absl::string_view json_text, double base_lr);

}  // namespace xlmr::optim

#endif  // XLMR_FRAMEWORK_OPTIM_LR_SCHEDULE_KWARGS_H_
