// The optimizer step's decisions taken on the device (issue 38, item 2), as PyTorch takes them
// with _amp_update_scale_ and fused optimizers' found_inf: whether the gradients are finite,
// whether the step is skipped, the clipping coefficient, which AdamW scalars apply and the next
// loss scale. They live in a small f64 "step state" tensor on the model's device, a ring of
// kStepStateRows rows, row step % kStepStateRows written by step `step`, so that the host can
// read a step's decisions later (framework/train/train_step.h) without the device waiting.
//
// The arithmetic is written once here, for the CPU kernels and the CUDA kernels alike
// (__host__ __device__ when nvcc compiles it), and is exactly the host code it replaces:
// framework/amp/loss_scaler.h's Update, framework/optim/grad_clip.h's ClipCoefficient. Every
// operation is an IEEE double or float operation correctly rounded on both backends (products,
// quotients, sqrt, double->float conversion); no product is followed by a sum that a compiler
// could contract. pow and the learning rate are never evaluated here: the host computes AdamW's
// scalars for every update count the step can have (AdamWCandidates) and the device picks one.
#ifndef XLMR_KERNELS_COMMON_STEP_STATE_H_
#define XLMR_KERNELS_COMMON_STEP_STATE_H_

#include <cmath>
#include <cstdint>

#include "kernels/common/adamw_step.h"
#include "kernels/common/host_device.h"

namespace xlmr::kernels {

// The slots of one row (doubles; flags are 0 or 1, counts are exact integers below 2^53).
// "Carried" slots are the state after the step; Begin copies them from the previous row.
enum StepSlot : int {
  // What the step used and observed.
  kSlotScaleUsed = 0,    // the loss scale the step's gradients were multiplied by (a float)
  kSlotFoundInf,         // 1 when a gradient was inf/NaN (agreed over ranks)
  kSlotSumOfSquares,     // of the unscaled gradients (sharded: summed over ranks)
  kSlotSkipped,          // 1 when nothing was updated (found_inf, or the scale had collapsed)
  kSlotCountBefore,      // AdamW's update count before the step
  kSlotCandidateError,   // 1 when no AdamW candidate matched the count (a host bug)
  kSlotGradientScale,    // float(scale used / the global batch's loss terms): the loss backward's factor
  kSlotLossSum,          // this rank's summed (unscaled) loss over the step's micro-batches
  // Carried (the loss scaler's and the optimizer's state after the step).
  kSlotScale,            // the scale of the next step (a float)
  kSlotGrowthTracker,
  kSlotConsecutiveOverflows,
  kSlotUpdateCount,      // AdamW's step count after the step
  kSlotCollapsed,        // 1 once an overflow took the scale below min_scale (sticky)
  kSlotOverflowedAt,     // the scale of the overflow that collapsed it (for the error message)
  kStepSlots
};

// Rows of the ring: how many steps the host may run ahead of its last read (TrainStep checks).
inline constexpr int kStepStateRows = 8;
// AdamW candidates: one per update count a step can start from (up to kStepStateRows unread
// steps before it, each of which may or may not have counted).
inline constexpr int kMaxAdamWCandidates = kStepStateRows + 1;

// framework/amp/loss_scaler.h's options as the device update needs them.
struct LossScaleRule {
  bool enabled = false;  // --fp16; disabled: the scale stays 1 and only the skip is decided
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
  double min_scale = 1.0;
};

// AdamW's scalars for update counts first_count, first_count + 1, ... (count of them), computed
// on the host exactly as AdamW::Step computes them (host pow, the schedule's rate). The step
// uses the one for its count before + 1.
struct AdamWCandidates {
  AdamWStepScalars scalars[kMaxAdamWCandidates];
  int64_t first_count = 1;
  int32_t count = 0;
};

// What the host decides for a step before it runs, written into the state beside the step's
// row before the step's work is queued and read there by its kernels (never passed to them as
// arguments), so that a captured step (a CUDA graph) replays with each step's own values.
struct StepInputs {
  AdamWCandidates candidates;  // AdamW's scalars for every update count the step may start from
  double loss_terms = 1;       // the global batch's loss terms (> 0): the mean's denominator
  uint32_t dropout_step = 0;   // the optimizer step of the dropout masks' Philox counter
  uint32_t unused = 0;
};
static_assert(sizeof(StepInputs) % sizeof(double) == 0, "StepInputs are stored in a tensor of doubles");
// Two rows past the ring where a captured step works (framework/train/step_graphs.h): its
// previous row is copied in before the launch and its row copied out to the ring after, so that
// one graph serves every ring row.
inline constexpr int kCapturedRow = kStepStateRows;
inline constexpr int kCapturedPreviousRow = kStepStateRows + 1;
inline constexpr int kStepStateAllRows = kStepStateRows + 2;
// The state's layout: kStepStateAllRows rows of kStepSlots doubles, then as many StepInputs.
inline constexpr int64_t kStepInputsOffsetDoubles = int64_t{kStepStateAllRows} * kStepSlots;
inline constexpr int64_t kStepInputsDoubles = sizeof(StepInputs) / sizeof(double);
inline constexpr int64_t kStepStateDoubles = kStepInputsOffsetDoubles + kStepStateAllRows * kStepInputsDoubles;

// Starts a step's row from the previous one: carried slots copied, observations cleared, and
// the loss backward's factor: the scale over the global batch's loss terms (> 0), rounded to
// float as the host formed it before (framework/train/train_step.h).
XLMR_HOST_DEVICE inline void BeginStepRow(const double* previous, double* row, double loss_terms) {
  for (int slot = kSlotScale; slot < kStepSlots; ++slot) row[slot] = previous[slot];
  row[kSlotScaleUsed] = previous[kSlotScale];
  row[kSlotGradientScale] = static_cast<float>(row[kSlotScaleUsed] / loss_terms);
  row[kSlotLossSum] = 0.0;
  row[kSlotFoundInf] = 0.0;
  row[kSlotSumOfSquares] = 0.0;
  row[kSlotSkipped] = 0.0;
  row[kSlotCountBefore] = previous[kSlotUpdateCount];
  row[kSlotCandidateError] = 0.0;
}

// torch: self._scale.double().reciprocal().float().
XLMR_HOST_DEVICE inline float InverseScaleOf(const double* row) {
  return static_cast<float>(1.0 / row[kSlotScaleUsed]);
}

// Nothing may be updated: inf/NaN gradients, or a scale that collapsed at an earlier step (the
// run stops with an error once the host reads that step; until then the weights stay as they
// were at the failure).
XLMR_HOST_DEVICE inline bool StepSkips(const double* row) {
  return row[kSlotFoundInf] != 0.0 || row[kSlotCollapsed] != 0.0;
}

// grad_clip.h's ClipCoefficient on the row's norm: float(max_norm) * (1 / (float(norm) +
// 1e-6f)), at most 1. 1 when the step skips (the norm may be inf/NaN) or max_norm <= 0.
XLMR_HOST_DEVICE inline float ClipCoefficientOf(const double* row, double max_norm) {
  if (StepSkips(row) || !(max_norm > 0.0)) return 1.0f;
  const double norm = sqrt(row[kSlotSumOfSquares]);
  const float reciprocal = 1.0f / (static_cast<float>(norm) + 1e-6f);
  const float coefficient = reciprocal * static_cast<float>(max_norm);
  return coefficient < 1.0f ? coefficient : 1.0f;
}

// The candidate for the row's count (count before + 1), or -1 when the host gave none.
XLMR_HOST_DEVICE inline int AdamWCandidateOf(const double* row, const AdamWCandidates& candidates) {
  const int64_t index =
      static_cast<int64_t>(row[kSlotCountBefore]) + 1 - candidates.first_count;
  return index >= 0 && index < candidates.count ? static_cast<int>(index) : -1;
}

XLMR_HOST_DEVICE inline bool FloatIsFinite(float value) {
  return value <= 3.402823466e38f && value >= -3.402823466e38f;  // false for inf and NaN
}

// Once per step, after the update: the skip flag, the update count, and loss_scaler.h's
// Update(finite) with products formed in double and rounded to float.
XLMR_HOST_DEVICE inline void FinishStepRow(double* row, const LossScaleRule& rule) {
  const bool skipped = StepSkips(row);
  row[kSlotSkipped] = skipped ? 1.0 : 0.0;
  if (!skipped) row[kSlotUpdateCount] += 1.0;
  if (!rule.enabled || row[kSlotCollapsed] != 0.0) return;  // collapsed: frozen until the host stops
  const float scale = static_cast<float>(row[kSlotScale]);
  if (row[kSlotFoundInf] == 0.0) {
    row[kSlotConsecutiveOverflows] = 0.0;
    row[kSlotGrowthTracker] += 1.0;
    if (row[kSlotGrowthTracker] >= static_cast<double>(rule.growth_interval)) {
      const float grown = static_cast<float>(static_cast<double>(scale) * rule.growth_factor);
      if (FloatIsFinite(grown)) row[kSlotScale] = grown;  // never grow past float32 into inf
      row[kSlotGrowthTracker] = 0.0;
    }
    return;
  }
  const float backed_off = static_cast<float>(static_cast<double>(scale) * rule.backoff_factor);
  row[kSlotScale] = backed_off;
  row[kSlotGrowthTracker] = 0.0;
  row[kSlotConsecutiveOverflows] += 1.0;
  if (!(static_cast<double>(backed_off) >= rule.min_scale)) {
    row[kSlotCollapsed] = 1.0;
    row[kSlotOverflowedAt] = scale;
  }
}

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_STEP_STATE_H_
