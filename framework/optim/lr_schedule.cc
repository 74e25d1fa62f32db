#include "framework/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"

namespace xlmr::optim {
namespace {

constexpr double kPi = 3.141592653589793;  // Python's math.pi
constexpr double kNumCycles = 0.5;         // get_cosine_schedule_with_warmup's default

struct NamedType {
  const char* name;
  LrScheduleType type;
};
constexpr NamedType kTypes[] = {
    {"linear", LrScheduleType::kLinear},
    {"cosine", LrScheduleType::kCosine},
    {"constant", LrScheduleType::kConstant},
    {"constant_with_warmup", LrScheduleType::kConstantWithWarmup},
};

absl::StatusOr<LrScheduleType> ParseLrScheduleType(absl::string_view text) {
  for (const NamedType& named : kTypes) {
    if (text == named.name) return named.type;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--lr_scheduler_type must be one of linear, cosine, constant, constant_with_warmup; got \"",
      text, "\""));
}

absl::Status ValidateScheduleFlags(double base_lr, int64_t total_steps, int64_t warmup_steps,
                                   double warmup_ratio) {
  if (!(base_lr >= 0.0 && std::isfinite(base_lr))) {
    return absl::InvalidArgumentError(
        absl::StrCat("--learning_rate must be a finite number >= 0; got ", base_lr));
  }
  if (!(warmup_ratio >= 0.0 && warmup_ratio <= 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--warmup_ratio must be in [0, 1]; got ", warmup_ratio));
  }
  if (warmup_steps < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--warmup_steps must be >= 0; got ", warmup_steps));
  }
  if (total_steps < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the run has ", total_steps,
        " optimizer steps; --max_steps, or --num_train_epochs with the training set, must give "
        "at least 1"));
  }
  return absl::OkStatus();
}

}  // namespace

const char* LrScheduleTypeName(LrScheduleType type) {
  for (const NamedType& named : kTypes) {
    if (named.type == type) return named.name;
  }
  return "?";
}

int64_t ResolveWarmupSteps(int64_t total_steps, int64_t warmup_steps, double warmup_ratio) {
  if (warmup_steps > 0) return warmup_steps;
  return static_cast<int64_t>(std::ceil(static_cast<double>(total_steps) * warmup_ratio));
}

LrSchedule::LrSchedule(LrScheduleType type, double base_lr, int64_t total_steps,
                       int64_t warmup_steps)
    : type_(type),
      base_lr_(base_lr),
      total_steps_(total_steps),
      warmup_steps_(type == LrScheduleType::kConstant ? 0 : warmup_steps) {
  XLMR_CHECK(base_lr >= 0.0 && std::isfinite(base_lr)) << "base_lr " << base_lr;
  XLMR_CHECK(total_steps >= 1) << "total_steps " << total_steps;
  XLMR_CHECK(warmup_steps >= 0) << "warmup_steps " << warmup_steps;
}

double LrSchedule::LearningRate(int64_t step) const {
  XLMR_CHECK(step >= 1) << "optimizer steps are 1-based; got " << step;
  return base_lr_ * Multiplier(step - 1);
}

double LrSchedule::WarmupMultiplier(int64_t current_step) const {
  return static_cast<double>(current_step) /
         static_cast<double>(std::max<int64_t>(1, warmup_steps_));
}

double LrSchedule::Multiplier(int64_t current_step) const {
  if (type_ == LrScheduleType::kConstant) return 1.0;
  if (current_step < warmup_steps_) return WarmupMultiplier(current_step);
  const double decay_steps =
      static_cast<double>(std::max<int64_t>(1, total_steps_ - warmup_steps_));
  switch (type_) {
    case LrScheduleType::kLinear:
      return std::max(0.0, static_cast<double>(total_steps_ - current_step) / decay_steps);
    case LrScheduleType::kCosine: {
      const double progress = static_cast<double>(current_step - warmup_steps_) / decay_steps;
      return std::max(0.0, 0.5 * (1.0 + std::cos(kPi * kNumCycles * 2.0 * progress)));
    }
    case LrScheduleType::kConstantWithWarmup:
    case LrScheduleType::kConstant:
      return 1.0;
  }
  return 1.0;
}

absl::StatusOr<LrSchedule> MakeLrSchedule(absl::string_view type, double base_lr,
                                          int64_t total_steps, int64_t warmup_steps,
                                          double warmup_ratio) {
  absl::StatusOr<LrScheduleType> parsed = ParseLrScheduleType(type);
  if (!parsed.ok()) return parsed.status();
  if (absl::Status s = ValidateScheduleFlags(base_lr, total_steps, warmup_steps, warmup_ratio);
      !s.ok()) {
    return s;
  }
  return LrSchedule(*parsed, base_lr, total_steps,
                    ResolveWarmupSteps(total_steps, warmup_steps, warmup_ratio));
}

}  // namespace xlmr::optim
