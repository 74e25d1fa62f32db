// DynamicLossScaler: fp16 loss scaling with torch.amp.GradScaler's rules and defaults.
//
// Per optimizer step (never per micro-step):
//   loss * scale()                        before backward (the caller multiplies)
//   finite = UnscaleAndCheckFinite(grads) one pass: g *= float(1 / double(scale)), and
//                                         whether every g was finite before the multiply
//   if finite: clip and step the optimizer; otherwise skip the step
//   Update(finite)                        the scale for the next step:
//     finite:     growth_tracker += 1; when it reaches growth_interval:
//                 scale = float(scale * growth_factor) unless that is inf, tracker = 0
//     not finite: scale = float(scale * backoff_factor), tracker = 0
// Products are formed in double and rounded to float, as torch's _amp_update_scale_ does with
// its float32 scale tensor and double factors.
// In training, TrainStep applies these rules on the device (kernels/common/step_state.h's
// FinishStepRow, the same arithmetic) and mirrors the result back here (MirrorDeviceState) when
// it reads a step; UnscaleAndCheckFinite and Update remain the host statement of the rules
// (and the tests' oracle for the device's).
//
// One addition to torch: min_scale (--loss_scale_min). torch halves the scale forever, down to
// 0, and keeps "training" on skipped steps; we stop with an error once the scale falls below
// min_scale, because by then the gradients overflow at any usable scale.
//
// Disabled (no --fp16): scale() is 1, UnscaleAndCheckFinite leaves the gradients unchanged and
// still reports whether they are finite, and Update changes nothing. The trainer skips steps
// with non-finite gradients in fp32 too. This is a deliberate difference from Hugging Face,
// whose fp32 optimizer step would write inf/nan into the weights.
#ifndef XLMR_FRAMEWORK_AMP_LOSS_SCALER_H_
#define XLMR_FRAMEWORK_AMP_LOSS_SCALER_H_

#include <cstdint>

#include "absl/status/status.h"
#include "framework/tensor/tensor.h"
#include "kernels/common/step_state.h"

namespace xlmr::amp {

struct LossScalerOptions {
  double init_scale = 65536.0;    // --loss_scale_init: > 0, finite
  double growth_factor = 2.0;     // --loss_scale_growth_factor: > 1, finite
  double backoff_factor = 0.5;    // --loss_scale_backoff_factor: in (0, 1)
  int64_t growth_interval = 2000;  // --loss_scale_growth_interval: >= 1
  double min_scale = 1.0;         // --loss_scale_min: >= 0, finite, <= init_scale
};

// One-line errors naming the flag. Checked whatever --fp16 says (the scaler may be disabled),
// so a bad flag is always reported.
absl::Status ValidateLossScalerOptions(const LossScalerOptions& options);

// What a checkpoint stores to resume the scale exactly.
struct LossScalerState {
  float scale = 65536.0f;
  int64_t growth_tracker = 0;         // finite steps since the last growth or overflow
  int64_t consecutive_overflows = 0;  // only for the error message
};

class DynamicLossScaler {
 public:
  // `options` must pass ValidateLossScalerOptions (checked). `enabled` is --fp16: the caller
  // passes its own fp16 setting (TrainerOptions::fp16), so no second switch can disagree.
  DynamicLossScaler(const LossScalerOptions& options, bool enabled);

  bool enabled() const { return enabled_; }
  // The factor the loss is multiplied by before backward: float(init_scale) at first, always 1
  // when disabled.
  float scale() const { return state_.scale; }

  // One pass (ops::UnscaleAndCheckFinite): multiplies every gradient by
  // float(1 / double(scale())) and returns true when all of them were finite before the
  // multiply; non-finite values are multiplied too (they stay non-finite), as torch's
  // _amp_foreach_non_finite_check_and_unscale_. [in,out] flat_grads: f32, CPU or CUDA (the same
  // bits on both). Disabled: reads only (ops::AllFinite).
  bool UnscaleAndCheckFinite(Tensor& flat_grads) const;

  // Once per optimizer step with UnscaleAndCheckFinite's answer (agreed across ranks). Returns
  // FailedPrecondition when an overflow takes the scale below min_scale; the state then holds
  // the new scale. Always OK when disabled.
  absl::Status Update(bool finite);

  LossScalerState GetState() const { return state_; }

  // The rules as the device applies them (kernels/common/step_state.h's FinishStepRow, the same
  // arithmetic as Update): TrainStep decides on the device and mirrors the result back here.
  kernels::LossScaleRule rule() const;
  // The device's state after a step, as the host learns it (TrainStep): no checks, since the
  // device computed it with Update's rules (a collapsed scale may be below min_scale).
  void MirrorDeviceState(const LossScalerState& state) { if (enabled()) state_ = state; }
  // Update's error for an overflow at scale `overflowed_at` that took the scale below
  // min_scale after `consecutive_overflows` overflows in a row.
  absl::Status CollapseError(float overflowed_at, int64_t consecutive_overflows) const;
  // Restores a checkpoint (scale > 0 and finite, counters >= 0); ignored when disabled, so a
  // run resumed without --fp16 keeps scale 1.
  absl::Status RestoreState(const LossScalerState& state);

 private:
  LossScalerOptions options_;
  bool enabled_;
  LossScalerState state_;
};

}  // namespace xlmr::amp

#endif  // XLMR_FRAMEWORK_AMP_LOSS_SCALER_H_
