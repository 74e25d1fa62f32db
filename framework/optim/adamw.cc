#include "framework/optim/adamw.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/ops/optim.h"

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

std::vector<ops::AdamWDecayRun> DecayRunsOf(const std::vector<AdamWSegment>& segments) {
  std::vector<ops::AdamWDecayRun> runs;
  runs.reserve(segments.size());
  for (const AdamWSegment& segment : segments) {
    runs.push_back({segment.range.offset, segment.range.size, segment.decay, segment.half_copy});
  }
  return runs;
}

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

std::vector<AdamWSegment> MakeAdamWSegments(const ParameterStore& store, bool decay_enabled) {
  return MakeAdamWSegments(store, decay_enabled, {0, store.total_elements()});
}

std::vector<AdamWSegment> MakeAdamWSegments(const ParameterStore& store, bool decay_enabled,
                                            const FlatRange& shard) {
  std::vector<AdamWSegment> segments;
  for (int i = 0; i < store.size(); ++i) {
    // The parameter's elements inside the shard, counted from the shard's start.
    const int64_t begin = std::max(store.range(i).offset, shard.offset);
    const int64_t end = std::min(store.range(i).offset + store.range(i).size, shard.offset + shard.size);
    if (end <= begin) continue;
    const FlatRange range{begin - shard.offset, end - begin};
    const bool decay = decay_enabled && store.spec(i).weight_decay;
    const bool half_copy = store.spec(i).read_in_half;
    if (!segments.empty() && segments.back().decay == decay && segments.back().half_copy == half_copy &&
        segments.back().range.offset + segments.back().range.size == range.offset) {
      segments.back().range.size += range.size;
    } else {
      segments.push_back({range, decay, half_copy});
    }
  }
  return segments;
}

AdamW::AdamW(ParameterStore& store, const AdamWOptions& options)
    : AdamW(store, options, FlatRange{0, store.total_elements()}) {}

AdamW::AdamW(ParameterStore& store, const AdamWOptions& options, const FlatRange& shard)
    : store_(store),
      options_(options),
      shard_(shard),
      segments_(MakeAdamWSegments(store, options.weight_decay != 0.0, shard)),
      runs_(DecayRunsOf(segments_)),
      exp_avg_(Tensor::Zeros({shard.size}, DType::kF32, store.master().device(), MemoryCategory::kOptimizer)),
      exp_avg_sq_(Tensor::Zeros({shard.size}, DType::kF32, store.master().device(), MemoryCategory::kOptimizer)) {
  const absl::Status valid = ValidateAdamWOptions(options);
  XLMR_CHECK(valid.ok()) << valid.message();
  XLMR_CHECK(shard.offset >= 0 && shard.size >= 0 && shard.offset + shard.size <= store.total_elements())
      << "AdamW shard [" << shard.offset << ", " << shard.offset + shard.size << ") outside the store";
}

void AdamW::Step(double lr) {
  XLMR_CHECK(std::isfinite(lr) && lr >= 0.0) << "learning rate " << lr;
  ++step_count_;
  if (segments_.empty()) return;
  const AdamWStepScalars scalars = ComputeAdamWStepScalars(options_, lr, step_count_);
  // Views of the shard (the whole buffers unsharded): the runs count from its start.
  Tensor master = store_.master().View(shard_.offset, {shard_.size});
  const Tensor grads = store_.grads().View(shard_.offset, {shard_.size});
  Tensor half = store_.half_copy();
  ops::AdamWStep(scalars, runs_, master, grads, exp_avg_, exp_avg_sq_, half.defined() ? &half : nullptr,
                 HalfFirst());
}

void AdamW::StepWithState(const Tensor& step_state, int row, const ops::RawGradientRule& rule) {
  if (segments_.empty()) return;
  Tensor master = store_.master().View(shard_.offset, {shard_.size});
  Tensor grads = store_.grads().View(shard_.offset, {shard_.size});
  Tensor half = store_.half_copy();
  ops::AdamWStepWithState(runs_, master, grads, exp_avg_, exp_avg_sq_, half.defined() ? &half : nullptr,
                          step_state, row, rule, HalfFirst());
}

int64_t AdamW::HalfFirst() const { return store_.half_window().offset - shard_.offset; }

absl::Status AdamW::RestoreState(int64_t step_count, const Tensor& exp_avg,
                                 const Tensor& exp_avg_sq) {
  if (step_count < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("optimizer state: step must be >= 0; got ", step_count));
  }
  const int64_t total = store_.total_elements();
  if (absl::Status s = CheckMoment("exp_avg", exp_avg, total); !s.ok()) return s;
  if (absl::Status s = CheckMoment("exp_avg_sq", exp_avg_sq, total); !s.ok()) return s;
  if (shard_.size > 0) {
    CopyTensorBytes(exp_avg.View(shard_.offset, {shard_.size}), exp_avg_);
    CopyTensorBytes(exp_avg_sq.View(shard_.offset, {shard_.size}), exp_avg_sq_);
  }
  step_count_ = step_count;
  return absl::OkStatus();
}

}  // namespace xlmr::optim
