// AdamW over the flat parameter buffers of a ParameterStore, element for element what
// torch.optim.AdamW computes (amsgrad=False, maximize=False, the for-loop/foreach
// implementations; the Hugging Face Trainer's "adamw_torch").
//
// For every element, with t the step count after the increment and lr the rate of this step:
//   p *= float(1 - lr * weight_decay)                  (decayed parameters only)
//   m  = fma(float(1 - beta1), g - m, m)               (torch's m.lerp_(g, 1 - beta1))
//   v  = fma(float(1 - beta2) * g, g, v * float(beta2)) (v.mul_(beta2).addcmul_(g, g, 1 - beta2))
//   denom = sqrt(v) / float(sqrt(1 - beta2^t)) + float(eps)
//   p += (float(-(lr / (1 - beta1^t))) * m) / denom    (p.addcdiv_(m, denom, -step_size))
// The scalars are computed in double, as torch computes them in Python floats, then rounded
// to float once, as torch's kernels do. The fused multiply-adds are the ones torch's CPU
// kernels (vectorized and scalar tails) and CUDA kernels execute.
// This header decides the arithmetic; the passes that evaluate it over the flat buffers are
// ops::AdamWStep's kernels (kernels/cpu/optim.h, kernels/cuda/optim.h).
//
// Known differences from torch, all below the tests' tolerance:
//   * torch's CPU float sqrt is not correctly rounded (1 ulp off for about a fifth of the
//     inputs); ours is IEEE sqrt, as CUDA's is. This moves some updates by an ulp; the
//     moments are unaffected and match torch bit for bit.
//   * transformers 5 with torch >= 2.8 defaults to optim="adamw_torch_fused", whose
//     kernel evaluates the same formula in another order (beta1 * m + (1 - beta1) * g, bias
//     corrections in float); results differ from this one by a few ulps per step.
//
// Weight decay is decoupled and applied only where ParameterSpec::weight_decay is true (the
// Trainer's no-decay group has weight_decay 0, which torch skips entirely).
#ifndef XLMR_FRAMEWORK_OPTIM_ADAMW_H_
#define XLMR_FRAMEWORK_OPTIM_ADAMW_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "framework/ops/optim.h"
#include "framework/ops/step_decisions.h"
#include "framework/tensor/parameter_store.h"
#include "framework/tensor/tensor.h"

namespace xlmr::optim {

// Hyper-parameters, as Python floats (doubles) like torch's param_groups hold them.
struct AdamWOptions {
  double beta1 = 0.9;         // --adam_beta1
  double beta2 = 0.999;       // --adam_beta2
  double eps = 1e-8;          // --adam_epsilon
  double weight_decay = 0.0;  // --weight_decay
};

// torch.optim.AdamW's own checks, naming our flags: betas in [0, 1), eps >= 0,
// weight_decay >= 0, all finite.
absl::Status ValidateAdamWOptions(const AdamWOptions& options);

// The per-step scalars (declared once, for the kernels too, in kernels/common/adamw_step.h),
// rounded to float exactly where torch rounds them.
using ops::AdamWStepScalars;

// [in] step: the step count t after the increment, >= 1.
AdamWStepScalars ComputeAdamWStepScalars(const AdamWOptions& options, double lr, int64_t step);

// A contiguous run of the flat buffers whose parameters all decay, or all do not.
struct AdamWSegment {
  FlatRange range;
  bool decay = false;
  bool half_copy = false;  // its parameters are read in half (ParameterSpec::read_in_half)
};

// Covers every parameter range of `store` in order, merging neighbouring parameters with the
// same decay and half-copy flags when no padding separates them (ParameterStore aligns each range, so the
// padding between ranges is never part of a segment and stays zero). With `shard` (ZeRO
// stage 1: the part of the flat buffers this rank updates), only the parameters' elements
// inside it, offsets counted from shard.offset.
std::vector<AdamWSegment> MakeAdamWSegments(const ParameterStore& store, bool decay_enabled);
std::vector<AdamWSegment> MakeAdamWSegments(const ParameterStore& store, bool decay_enabled,
                                            const FlatRange& shard);

class AdamW {
 public:
  // Allocates the moments (zeros, f32, [store.total_elements()], the store's device, category
  // kOptimizer). `store` is not owned and must outlive this object. `options` must pass
  // ValidateAdamWOptions (checked).
  AdamW(ParameterStore& store, const AdamWOptions& options);
  // ZeRO stage 1: the optimizer of one shard of the flat buffers (distributed/zero_partition.h):
  // moments of [shard.size] elements only, and Step updates only the masters (and half copy)
  // inside the shard, from the gradients inside it. The whole buffer as shard is the
  // constructor above.
  AdamW(ParameterStore& store, const AdamWOptions& options, const FlatRange& shard);

  // Increments the step count, then updates store.master() in place from store.grads() (which
  // it only reads) with learning rate `lr` (finite, >= 0). lr is a double because the
  // schedule's rate is a Python float in torch and step_size = lr / (1 - beta1^t) is formed in
  // double before rounding. When the store has an fp16 working copy, Step also rewrites it
  // from the new masters in the same pass (ops::AdamWStep), so callers never refresh it
  // themselves.
  void Step(double lr);

  // Step with the decisions on the device (framework/ops/step_decisions.h): the scalars are
  // the row's StepInputs' candidates.scalars[i] for the update count the row holds (count
  // before + 1 = candidates.first_count + i, each computed by ComputeAdamWStepScalars with that
  // count and its scheduled rate), and nothing is updated when the row says the step skips. The count
  // advances on the device (FinishStepState); the host learns it later (SetStepCount). The
  // shard's gradients are raw: unscaled and clipped by `rule` as they are read, then zeroed
  // (ops::AdamWStepWithState's pass 2).
  void StepWithState(const Tensor& step_state, int row, const ops::RawGradientRule& rule);
  // The update count the device reached, as the host reads it (TrainStep).
  void SetStepCount(int64_t step_count) { step_count_ = step_count; }

  int64_t step_count() const { return step_count_; }
  const AdamWOptions& options() const { return options_; }
  const std::vector<AdamWSegment>& segments() const { return segments_; }

  // The part of the flat buffers this optimizer updates ([0, total_elements) unsharded).
  const FlatRange& shard() const { return shard_; }

  // The moments, torch's state["exp_avg"] (m) and state["exp_avg_sq"] (v), flattened in the
  // store's layout: [shard().size] f32 (the store's total_elements unsharded). For checkpoints.
  const Tensor& exp_avg() const { return exp_avg_; }
  const Tensor& exp_avg_sq() const { return exp_avg_sq_; }

  // Restores a checkpoint: copies the moments (f32, total_elements values each in the store's
  // layout, any device; sharded, only the shard's part is kept) and sets the step count. Errors
  // name the mismatching field; nothing changes on error.
  absl::Status RestoreState(int64_t step_count, const Tensor& exp_avg, const Tensor& exp_avg_sq);

 private:
  // Where the store's half copy starts, as an element index of the shard (negative when the shard
  // starts inside the half window): ops::AdamWStep's half_first.
  int64_t HalfFirst() const;

  ParameterStore& store_;
  AdamWOptions options_;
  FlatRange shard_;
  std::vector<AdamWSegment> segments_;
  std::vector<ops::AdamWDecayRun> runs_;  // segments_ as ops::AdamWStep takes them (shard offsets)
  Tensor exp_avg_;
  Tensor exp_avg_sq_;
  int64_t step_count_ = 0;
};

}  // namespace xlmr::optim

#endif  // XLMR_FRAMEWORK_OPTIM_ADAMW_H_
