#include "framework/amp/loss_scaler.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/ops/optim.h"

namespace xlmr::amp {
namespace {

absl::Status InvalidFlag(const char* flag, const char* expected, double value) {
  return absl::InvalidArgumentError(absl::StrCat(flag, " must be ", expected, "; got ", value));
}

}  // namespace

absl::Status ValidateLossScalerOptions(const LossScalerOptions& options) {
  const float init_as_float = static_cast<float>(options.init_scale);
  if (!(init_as_float > 0.0f && std::isfinite(init_as_float))) {
    return InvalidFlag("--loss_scale_init", "a finite number > 0 that fits in float32",
                       options.init_scale);
  }
  if (!(options.growth_factor > 1.0 && std::isfinite(options.growth_factor))) {
    return InvalidFlag("--loss_scale_growth_factor", "a finite number > 1",
                       options.growth_factor);
  }
  if (!(options.backoff_factor > 0.0 && options.backoff_factor < 1.0)) {
    return InvalidFlag("--loss_scale_backoff_factor", "in (0, 1)", options.backoff_factor);
  }
  if (options.growth_interval < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--loss_scale_growth_interval must be >= 1; got ", options.growth_interval));
  }
  if (!(options.min_scale >= 0.0 && options.min_scale <= options.init_scale)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--loss_scale_min must be a finite number >= 0 and at most --loss_scale_init (",
        options.init_scale, "); got ", options.min_scale));
  }
  return absl::OkStatus();
}

DynamicLossScaler::DynamicLossScaler(const LossScalerOptions& options, bool enabled)
    : options_(options), enabled_(enabled) {
  const absl::Status valid = ValidateLossScalerOptions(options);
  XLMR_CHECK(valid.ok()) << valid.message();
  state_.scale = enabled ? static_cast<float>(options.init_scale) : 1.0f;
}

bool DynamicLossScaler::UnscaleAndCheckFinite(Tensor& flat_grads) const {
  XLMR_CHECK(flat_grads.dtype() == DType::kF32) << "gradients must be f32";
  if (flat_grads.numel() == 0) return true;
  if (!enabled()) return ops::AllFinite(flat_grads);
  // torch: self._scale.double().reciprocal().float()
  const float inv_scale = static_cast<float>(1.0 / static_cast<double>(state_.scale));
  return ops::UnscaleAndCheckFinite(flat_grads, inv_scale);
}

absl::Status DynamicLossScaler::Update(bool finite) {
  if (!enabled()) return absl::OkStatus();
  if (finite) {
    state_.consecutive_overflows = 0;
    if (++state_.growth_tracker >= options_.growth_interval) {
      const float grown = static_cast<float>(state_.scale * options_.growth_factor);
      if (std::isfinite(grown)) state_.scale = grown;  // never grow past float32 into inf
      state_.growth_tracker = 0;
    }
    return absl::OkStatus();
  }
  const float overflowed_at = state_.scale;
  state_.scale = static_cast<float>(state_.scale * options_.backoff_factor);
  state_.growth_tracker = 0;
  ++state_.consecutive_overflows;
  if (state_.scale >= options_.min_scale) return absl::OkStatus();
  return CollapseError(overflowed_at, state_.consecutive_overflows);
}

absl::Status DynamicLossScaler::CollapseError(float overflowed_at, int64_t consecutive_overflows) const {
  return absl::FailedPreconditionError(absl::StrCat(
      "fp16 loss scale fell below --loss_scale_min (", options_.min_scale, ") after ",
      consecutive_overflows, " consecutive overflows: the gradients are inf/nan even at "
      "scale ", overflowed_at, "; the model or learning rate diverged"));
}

kernels::LossScaleRule DynamicLossScaler::rule() const {
  return kernels::LossScaleRule{enabled_, options_.growth_factor, options_.backoff_factor,
                                options_.growth_interval, options_.min_scale};
}

absl::Status DynamicLossScaler::RestoreState(const LossScalerState& state) {
  if (!(state.scale > 0.0f && std::isfinite(state.scale))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "loss scaler state: scale must be a finite number > 0; got ", state.scale));
  }
  if (state.growth_tracker < 0 || state.consecutive_overflows < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "loss scaler state: growth_tracker and consecutive_overflows must be >= 0; got ",
        state.growth_tracker, " and ", state.consecutive_overflows));
  }
  if (enabled()) state_ = state;
  return absl::OkStatus();
}

}  // namespace xlmr::amp
