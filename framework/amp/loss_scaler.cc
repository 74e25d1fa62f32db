#include "framework/amp/loss_scaler.h"

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/parallel.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/optim.h"
#endif

namespace xlmr::amp {
namespace {

// 1 when a float is infinite or NaN (its exponent bits all ones), else 0. Testing the bits
// keeps the loops branch-free (and immune to -ffast-math's isfinite folding), and OR-ing the
// results into an integer lets them vectorise (a bool &= does not).
inline uint32_t NonFiniteBit(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return (bits & 0x7f800000u) == 0x7f800000u;
}

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

namespace {

// Elements per task on the CPU threads: each element's result is its own, and the flag is an
// AND, so the split cannot change any bit.
constexpr int64_t kElementsPerTask = 1 << 15;

// Vectorised (BUILD: -fvect-cost-model=dynamic) and built per instruction set; multiplying and
// testing bits are exact in all of them.
__attribute__((target_clones("arch=x86-64-v4", "arch=haswell", "default")))
bool UnscaleAndCheckFiniteBlock(float* grads, int64_t n, float inv_scale) {
  uint32_t non_finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float value = grads[i];
    non_finite |= NonFiniteBit(value);
    grads[i] = value * inv_scale;
  }
  return non_finite == 0;
}

__attribute__((target_clones("arch=x86-64-v4", "arch=haswell", "default")))
bool AllFiniteBlock(const float* values, int64_t n) {
  uint32_t non_finite = 0;
  for (int64_t i = 0; i < n; ++i) non_finite |= NonFiniteBit(values[i]);
  return non_finite == 0;
}

// block(begin, end) -> bool over [0, n) on the CPU threads; true when every call was.
template <typename Block>
bool AllBlocksTrue(int64_t n, const Block& block) {
  std::atomic<bool> all_true{true};
  kernels::cpu::ParallelFor(n, kElementsPerTask, [&](int64_t begin, int64_t end) {
    if (!block(begin, end)) all_true.store(false, std::memory_order_relaxed);
  });
  return all_true.load(std::memory_order_relaxed);
}

}  // namespace

bool UnscaleAndCheckFiniteRange(float* grads, int64_t n, float inv_scale) {
  return AllBlocksTrue(n, [&](int64_t begin, int64_t end) {
    return UnscaleAndCheckFiniteBlock(grads + begin, end - begin, inv_scale);
  });
}

bool AllFiniteRange(const float* values, int64_t n) {
  return AllBlocksTrue(
      n, [&](int64_t begin, int64_t end) { return AllFiniteBlock(values + begin, end - begin); });
}

DynamicLossScaler::DynamicLossScaler(const LossScalerOptions& options, bool enabled)
    : options_(options), enabled_(enabled) {
  const absl::Status valid = ValidateLossScalerOptions(options);
  XLMR_CHECK(valid.ok()) << valid.message();
  state_.scale = enabled ? static_cast<float>(options.init_scale) : 1.0f;
}

bool DynamicLossScaler::UnscaleAndCheckFinite(Tensor& flat_grads) const {
  constexpr const char* kOp = "amp::DynamicLossScaler::UnscaleAndCheckFinite";
  XLMR_CHECK(flat_grads.dtype() == DType::kF32) << "gradients must be f32";
  if (flat_grads.numel() == 0) return true;
  const Device device = flat_grads.device();
  if (!enabled()) {
    return ops::DispatchByDevice(
        kOp, device, [&] { return AllFiniteRange(flat_grads.data<float>(), flat_grads.numel()); },
        XLMR_CUDA_KERNEL(kernels::cuda::AllFinite(flat_grads)));
  }
  // torch: self._scale.double().reciprocal().float()
  const float inv_scale = static_cast<float>(1.0 / static_cast<double>(state_.scale));
  return ops::DispatchByDevice(
      kOp, device,
      [&] {
        return UnscaleAndCheckFiniteRange(flat_grads.data<float>(), flat_grads.numel(), inv_scale);
      },
      XLMR_CUDA_KERNEL(kernels::cuda::UnscaleAndCheckFinite(flat_grads, inv_scale)));
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
  return absl::FailedPreconditionError(absl::StrCat(
      "fp16 loss scale fell below --loss_scale_min (", options_.min_scale, ") after ",
      state_.consecutive_overflows, " consecutive overflows: the gradients are inf/nan even at "
      "scale ", overflowed_at, "; the model or learning rate diverged"));
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
