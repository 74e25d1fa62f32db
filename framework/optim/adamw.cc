#include "framework/optim/adamw.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/parallel.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/optim.h"
#endif

// This file is compiled with -ffp-contract=off (see BUILD): torch rounds every product and sum
// below separately except where it calls a fused multiply-add, so the compiler must not fuse
// others (p * decay_factor + update would otherwise become one fma on FMA-capable targets).

namespace xlmr::optim {
namespace {

absl::Status CheckBeta(const char* flag, double value) {
  if (value >= 0.0 && value < 1.0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(flag, " must be in [0, 1); got ", value));
}

absl::Status CheckNonNegative(const char* flag, double value) {
  if (value >= 0.0 && std::isfinite(value)) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(flag, " must be a finite number >= 0; got ", value));
}

absl::Status CheckMoment(const char* field, const Tensor& moment, int64_t expected_elements) {
  if (moment.defined() && moment.dtype() == DType::kF32 && moment.numel() == expected_elements) {
    return absl::OkStatus();
  }
  const std::string got =
      moment.defined() ? absl::StrCat(DTypeName(moment.dtype()), " with ", moment.numel(),
                                      " elements")
                       : "no tensor";
  return absl::InvalidArgumentError(
      absl::StrCat("optimizer state: ", field, " must be f32 with ", expected_elements,
                   " elements (one per parameter value of the model); got ", got));
}

void CopyTensorBytes(const Tensor& source, Tensor& destination) {
  CopyBytes(destination.raw_data(), destination.device(), source.raw_data(), source.device(),
            destination.bytes());
}

void StepOnCpu(const AdamWStepScalars& scalars, const std::vector<AdamWSegment>& segments,
               ParameterStore& store, Tensor& exp_avg, Tensor& exp_avg_sq) {
  float* param = store.master().data<float>();
  const float* grad = store.grads().data<float>();
  float* m = exp_avg.data<float>();
  float* v = exp_avg_sq.data<float>();
  // Every element's update reads only its own parameter, gradient and moments, so splitting a
  // segment over threads changes nothing in the result.
  constexpr int64_t kElementsPerTask = 32768;
  for (const AdamWSegment& segment : segments) {
    const int64_t offset = segment.range.offset;
    kernels::cpu::ParallelFor(segment.range.size, kElementsPerTask, [&](int64_t begin, int64_t end) {
      const int64_t at = offset + begin;
      AdamWUpdateRange(scalars, segment.decay, param + at, grad + at, m + at, v + at, end - begin);
    });
  }
  // The fp16 working copy follows the masters it derives from (the CUDA pass fuses this).
  if (store.has_half_copy()) store.RefreshHalfCopy();
}

#ifdef XLMR_WITH_CUDA
static_assert(sizeof(kernels::cuda::AdamWScalars) == sizeof(AdamWStepScalars),
              "kernels/cuda/optim.h's AdamWScalars must restate every AdamWStepScalars field");

// One fused pass over all segments, which also rewrites the store's fp16 working copy when it
// has one (the CPU path refreshes it in a second pass).
void StepOnCuda(const AdamWStepScalars& s, const std::vector<AdamWSegment>& segments,
                ParameterStore& store, Tensor& exp_avg, Tensor& exp_avg_sq) {
  kernels::cuda::AdamWScalars scalars;
  scalars.decay_factor = s.decay_factor;
  scalars.lerp_weight = s.lerp_weight;
  scalars.beta2 = s.beta2;
  scalars.one_minus_beta2 = s.one_minus_beta2;
  scalars.bias_correction2_sqrt = s.bias_correction2_sqrt;
  scalars.eps = s.eps;
  scalars.neg_step_size = s.neg_step_size;
  std::vector<kernels::cuda::AdamWDecayRun> runs;
  runs.reserve(segments.size());
  for (const AdamWSegment& segment : segments) {
    runs.push_back({segment.range.offset, segment.range.size, segment.decay});
  }
  Tensor half = store.half_copy();
  kernels::cuda::AdamWStep(scalars, runs, store.master(), store.grads(), exp_avg, exp_avg_sq,
                           half.defined() ? &half : nullptr);
}
#endif

}  // namespace

absl::Status ValidateAdamWOptions(const AdamWOptions& options) {
  if (absl::Status s = CheckBeta("--adam_beta1", options.beta1); !s.ok()) return s;
  if (absl::Status s = CheckBeta("--adam_beta2", options.beta2); !s.ok()) return s;
  if (absl::Status s = CheckNonNegative("--adam_epsilon", options.eps); !s.ok()) return s;
  return CheckNonNegative("--weight_decay", options.weight_decay);
}

AdamWStepScalars ComputeAdamWStepScalars(const AdamWOptions& options, double lr, int64_t step) {
  XLMR_CHECK(step >= 1) << "AdamW step count " << step;
  // torch keeps the step in a float32 tensor and reads it back as a Python float; every
  // count below 2^24 is exact either way.
  const double t = static_cast<double>(step);
  const double bias_correction1 = 1.0 - std::pow(options.beta1, t);
  const double bias_correction2 = 1.0 - std::pow(options.beta2, t);
  AdamWStepScalars scalars;
  scalars.decay_factor = static_cast<float>(1.0 - lr * options.weight_decay);
  scalars.lerp_weight = static_cast<float>(1.0 - options.beta1);
  scalars.beta2 = static_cast<float>(options.beta2);
  scalars.one_minus_beta2 = static_cast<float>(1.0 - options.beta2);
  // Python's `bias_correction2 ** 0.5`, i.e. pow, not sqrt.
  scalars.bias_correction2_sqrt = static_cast<float>(std::pow(bias_correction2, 0.5));
  scalars.eps = static_cast<float>(options.eps);
  scalars.neg_step_size = static_cast<float>(-(lr / bias_correction1));
  return scalars;
}

// Built three times, picked at load time: for CPUs with AVX-512 (x86-64-v4), for CPUs with AVX2
// and FMA, and for any x86-64. The loop vectorises (BUILD: -fvect-cost-model=dynamic; sqrt
// without errno) and std::fma becomes one instruction instead of a libm call per element.
// fma, sqrt, division, products and sums are correctly rounded in every instruction set, so all
// three give the same bits.
__attribute__((target_clones("arch=x86-64-v4", "arch=haswell", "default")))
void AdamWUpdateRange(const AdamWStepScalars& scalars, bool decay, float* __restrict param,
                      const float* __restrict grad, float* __restrict exp_avg,
                      float* __restrict exp_avg_sq, int64_t n) {
  // Multiplying by exactly 1.0f leaves every float unchanged, so undecayed ranges take the
  // same loop as torch's skipped p.mul_().
  const float decay_factor = decay ? scalars.decay_factor : 1.0f;
  // exp_avg.lerp_(grad, weight): torch's lerp for a scalar weight (ATen Lerp.h) picks its
  // formula by |weight| < 0.5, and both the vectorized CPU code and the CUDA code evaluate it as
  // one fused multiply-add: weight * (end - self) + self, or (weight - 1) * (end - self) + end.
  const bool lerp_from_self = std::fabs(scalars.lerp_weight) < 0.5f;
  const float lerp_factor = lerp_from_self ? scalars.lerp_weight : scalars.lerp_weight - 1.0f;
  const float beta2 = scalars.beta2;
  const float one_minus_beta2 = scalars.one_minus_beta2;
  const float bias_correction2_sqrt = scalars.bias_correction2_sqrt;
  const float eps = scalars.eps;
  const float neg_step_size = scalars.neg_step_size;
  for (int64_t i = 0; i < n; ++i) {
    const float g = grad[i];
    const float m_old = exp_avg[i];
    const float m = std::fma(lerp_factor, g - m_old, lerp_from_self ? m_old : g);
    const float v = std::fma(one_minus_beta2 * g, g, exp_avg_sq[i] * beta2);
    const float denom = std::sqrt(v) / bias_correction2_sqrt + eps;
    const float decayed = param[i] * decay_factor;
    param[i] = decayed + (neg_step_size * m) / denom;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
  }
}

std::vector<AdamWSegment> MakeAdamWSegments(const ParameterStore& store, bool decay_enabled) {
  std::vector<AdamWSegment> segments;
  for (int i = 0; i < store.size(); ++i) {
    const FlatRange& range = store.range(i);
    if (range.size == 0) continue;
    const bool decay = decay_enabled && store.spec(i).weight_decay;
    if (!segments.empty() && segments.back().decay == decay &&
        segments.back().range.offset + segments.back().range.size == range.offset) {
      segments.back().range.size += range.size;
    } else {
      segments.push_back({range, decay});
    }
  }
  return segments;
}

AdamW::AdamW(ParameterStore& store, const AdamWOptions& options)
    : store_(store),
      options_(options),
      segments_(MakeAdamWSegments(store, options.weight_decay != 0.0)),
      exp_avg_(Tensor::Zeros({store.total_elements()}, DType::kF32, store.master().device(),
                             MemoryCategory::kOptimizer)),
      exp_avg_sq_(Tensor::Zeros({store.total_elements()}, DType::kF32, store.master().device(),
                                MemoryCategory::kOptimizer)) {
  const absl::Status valid = ValidateAdamWOptions(options);
  XLMR_CHECK(valid.ok()) << valid.message();
}

void AdamW::Step(double lr) {
  XLMR_CHECK(std::isfinite(lr) && lr >= 0.0) << "learning rate " << lr;
  ++step_count_;
  if (segments_.empty()) return;
  const AdamWStepScalars scalars = ComputeAdamWStepScalars(options_, lr, step_count_);
  ops::DispatchByDevice(
      "optim::AdamW::Step", store_.master().device(),
      [&] { StepOnCpu(scalars, segments_, store_, exp_avg_, exp_avg_sq_); },
      XLMR_CUDA_KERNEL(StepOnCuda(scalars, segments_, store_, exp_avg_, exp_avg_sq_)));
}

absl::Status AdamW::RestoreState(int64_t step_count, const Tensor& exp_avg,
                                 const Tensor& exp_avg_sq) {
  if (step_count < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer state: step must be >= 0; got ", step_count));
  }
  const int64_t total = store_.total_elements();
  if (absl::Status s = CheckMoment("exp_avg", exp_avg, total); !s.ok()) return s;
  if (absl::Status s = CheckMoment("exp_avg_sq", exp_avg_sq, total); !s.ok()) return s;
  if (total > 0) {
    CopyTensorBytes(exp_avg, exp_avg_);
    CopyTensorBytes(exp_avg_sq, exp_avg_sq_);
  }
  step_count_ = step_count;
  return absl::OkStatus();
}

}  // namespace xlmr::optim
