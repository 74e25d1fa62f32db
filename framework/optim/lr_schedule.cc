#include "framework/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"

namespace xlmr::optim {
namespace {

constexpr double kPi = 3.141592653589793;  // Python's math.pi
constexpr int64_t kInverseSqrtTimescale = 10000;  // get_inverse_sqrt_schedule without warmup

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

double AsDouble(int64_t value) { return static_cast<double>(value); }

// warmup_stable_decay's warmup and decay curves, of progress in [0, 1).
double WsdWarmupShape(WsdShape shape, double progress) {
  switch (shape) {
    case WsdShape::kLinear: return progress;
    case WsdShape::kCosine: return 0.5 * (1.0 - std::cos(kPi * progress));
    case WsdShape::kOneMinusSqrt: return 1.0 - std::sqrt(1.0 - progress);
  }
  return progress;
}

}  // namespace

int64_t ResolveWarmupSteps(int64_t total_steps, int64_t warmup_steps, double warmup_ratio) {
  if (warmup_steps > 0) return warmup_steps;
  return static_cast<int64_t>(std::ceil(static_cast<double>(total_steps) * warmup_ratio));
}

LrSchedule::LrSchedule(LrScheduleType type, double base_lr, int64_t total_steps,
                       int64_t warmup_steps, const LrScheduleKwargs& kwargs)
    : type_(type),
      base_lr_(base_lr),
      total_steps_(total_steps),
      warmup_steps_(type == LrScheduleType::kConstant ? 0 : warmup_steps),
      kwargs_(kwargs) {
  XLMR_CHECK(base_lr >= 0.0 && std::isfinite(base_lr)) << "base_lr " << base_lr;
  XLMR_CHECK(total_steps >= 1) << "total_steps " << total_steps;
  XLMR_CHECK(warmup_steps >= 0) << "warmup_steps " << warmup_steps;
  // HF's defaults that depend on the run: `num_warmup_steps or 10_000`, and a stable phase
  // filling what warmup and decay leave (negative when they overrun the run, as in HF).
  if (!kwargs_.timescale) {
    kwargs_.timescale = warmup_steps_ > 0 ? warmup_steps_ : kInverseSqrtTimescale;
  }
  if (!kwargs_.num_stable_steps) {
    kwargs_.num_stable_steps = total_steps_ - warmup_steps_ - kwargs_.num_decay_steps;
  }
  XLMR_CHECK(*kwargs_.timescale >= 1) << "timescale " << *kwargs_.timescale;
}

double LrSchedule::LearningRate(int64_t step) const {
  XLMR_CHECK(step >= 1) << "optimizer steps are 1-based; got " << step;
  return base_lr_ * Multiplier(step - 1);
}

double LrSchedule::WarmupMultiplier(int64_t current_step) const {
  return AsDouble(current_step) / AsDouble(std::max<int64_t>(1, warmup_steps_));
}

double LrSchedule::CosineFactor(double progress) const {
  return 0.5 * (1.0 + std::cos(kPi * kwargs_.num_cycles * 2.0 * progress));
}

double LrSchedule::Multiplier(int64_t current_step) const {
  switch (type_) {  // the types whose warmup is not the common one
    case LrScheduleType::kConstant: return 1.0;
    case LrScheduleType::kCosineWarmupWithMinLr: return CosineWarmupWithMinLrMultiplier(current_step);
    case LrScheduleType::kWarmupStableDecay: return WarmupStableDecayMultiplier(current_step);
    default: break;
  }
  if (current_step < warmup_steps_) return WarmupMultiplier(current_step);
  const double decay_steps = AsDouble(std::max<int64_t>(1, total_steps_ - warmup_steps_));
  const double progress = AsDouble(current_step - warmup_steps_) / decay_steps;
  switch (type_) {
    case LrScheduleType::kLinear:
      return std::max(0.0, AsDouble(total_steps_ - current_step) / decay_steps);
    case LrScheduleType::kCosine:
      return std::max(0.0, CosineFactor(progress));
    case LrScheduleType::kCosineWithRestarts:
      if (progress >= 1.0) return 0.0;
      // Python's % of two non-negative floats is fmod.
      return std::max(0.0, 0.5 * (1.0 + std::cos(kPi * std::fmod(kwargs_.num_cycles * progress, 1.0))));
    case LrScheduleType::kPolynomial:
      return PolynomialMultiplier(current_step);
    case LrScheduleType::kInverseSqrt: {
      const int64_t timescale = *kwargs_.timescale;
      const int64_t shift = timescale - warmup_steps_;
      return 1.0 / std::sqrt(AsDouble(current_step + shift) / AsDouble(timescale));
    }
    case LrScheduleType::kCosineWithMinLr: {
      const double factor = CosineFactor(progress);
      return std::max(0.0, factor * (1 - kwargs_.min_lr_rate) + kwargs_.min_lr_rate);
    }
    case LrScheduleType::kConstantWithWarmup:
    case LrScheduleType::kConstant:
    case LrScheduleType::kCosineWarmupWithMinLr:
    case LrScheduleType::kWarmupStableDecay:
      break;
  }
  return 1.0;
}

// Past warmup. HF's lambda divides by base_lr (optimizer.defaults["lr"]) because LambdaLR
// multiplies by it again; kept, so the rounding is HF's.
double LrSchedule::PolynomialMultiplier(int64_t current_step) const {
  // HF divides by T - W = 0 when the warmup is the whole run and the step is the last one
  // (never a training step: those are k < T); its limit is the end rate.
  if (current_step > total_steps_ || total_steps_ == warmup_steps_) return kwargs_.lr_end / base_lr_;
  const double lr_range = base_lr_ - kwargs_.lr_end;
  const double decay_steps = AsDouble(total_steps_ - warmup_steps_);
  const double pct_remaining = 1 - AsDouble(current_step - warmup_steps_) / decay_steps;
  const double decay = lr_range * std::pow(pct_remaining, kwargs_.power) + kwargs_.lr_end;
  return decay / base_lr_;
}

// get_cosine_with_min_lr_schedule_with_warmup_lr_rate: step counts as floats, its own warmup,
// and a progress one step ahead of cosine_with_min_lr's.
double LrSchedule::CosineWarmupWithMinLrMultiplier(int64_t current_step) const {
  const double k = AsDouble(current_step), w = AsDouble(warmup_steps_), t = AsDouble(total_steps_);
  if (k < w) {
    if (!kwargs_.warmup_lr_rate) return (k + 1.0) / std::max(1.0, w);
    const double rate = *kwargs_.warmup_lr_rate;
    return rate + (1.0 - rate) * k / std::max(1.0, w - 1);
  }
  const double progress = (k - w + 1.0) / std::max(1.0, t - w);
  const double factor = CosineFactor(progress);
  return std::max(0.0, factor * (1 - kwargs_.min_lr_rate) + kwargs_.min_lr_rate);
}

double LrSchedule::WarmupStableDecayMultiplier(int64_t current_step) const {
  const double min_ratio = kwargs_.min_lr_ratio;
  const int64_t stable = *kwargs_.num_stable_steps, decay = kwargs_.num_decay_steps;
  if (current_step < warmup_steps_) {
    const double factor = WsdWarmupShape(kwargs_.warmup_type, WarmupMultiplier(current_step));
    return std::max(0.0, factor * (1.0 - min_ratio) + min_ratio);
  }
  if (current_step < warmup_steps_ + stable) return 1.0;
  if (current_step < warmup_steps_ + stable + decay) {
    const double progress = AsDouble(current_step - warmup_steps_ - stable) /
                            AsDouble(std::max<int64_t>(1, decay));
    double factor = 0;
    switch (kwargs_.decay_type) {
      case WsdShape::kLinear: factor = 1.0 - progress; break;
      case WsdShape::kCosine: factor = CosineFactor(progress); break;
      case WsdShape::kOneMinusSqrt: factor = 1.0 - std::sqrt(progress); break;
    }
    return std::max(0.0, factor * (1.0 - min_ratio) + min_ratio);
  }
  return min_ratio;
}

absl::StatusOr<LrSchedule> MakeLrSchedule(absl::string_view type, double base_lr,
                                          int64_t total_steps, int64_t warmup_steps,
                                          double warmup_ratio, absl::string_view kwargs_json) {
  absl::StatusOr<LrScheduleType> parsed = ParseLrScheduleType(type);
  if (!parsed.ok()) return parsed.status();
  if (absl::Status s = ValidateScheduleFlags(base_lr, total_steps, warmup_steps, warmup_ratio);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<LrScheduleKwargs> kwargs = ParseLrScheduleKwargs(*parsed, kwargs_json, base_lr);
  if (!kwargs.ok()) return kwargs.status();
  return LrSchedule(*parsed, base_lr, total_steps,
                    ResolveWarmupSteps(total_steps, warmup_steps, warmup_ratio), *kwargs);
}

}  // namespace xlmr::optim
