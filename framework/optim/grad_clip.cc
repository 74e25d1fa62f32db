#include "framework/optim/grad_clip.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/ops/optim.h"

namespace xlmr::optim {
namespace {

// torch's `total_norm + 1e-6` on a float32 tensor adds float(1e-6).
constexpr float kNormEpsilon = 1e-6f;

void CheckF32(const Tensor& tensor) {
  XLMR_CHECK(tensor.dtype() == DType::kF32) << "gradients must be f32";
}

}  // namespace

double GlobalL2Norm(const Tensor& flat_grads) { return std::sqrt(SumOfSquares(flat_grads)); }

double SumOfSquares(const Tensor& flat_grads) {
  CheckF32(flat_grads);
  if (flat_grads.numel() == 0) return 0.0;
  return ops::SumOfSquares(flat_grads);
}

float ClipCoefficient(double total_norm, double max_norm) {
  XLMR_CHECK(std::isfinite(total_norm) && total_norm >= 0.0)
      << "clipping needs a finite gradient norm; got " << total_norm;
  if (!(max_norm > 0.0)) return 1.0f;
  const float reciprocal = 1.0f / (static_cast<float>(total_norm) + kNormEpsilon);
  const float coefficient = reciprocal * static_cast<float>(max_norm);
  return coefficient < 1.0f ? coefficient : 1.0f;
}

void ClipGradNorm(Tensor& flat_grads, double total_norm, double max_norm) {
  CheckF32(flat_grads);
  const float coefficient = ClipCoefficient(total_norm, max_norm);
  if (coefficient == 1.0f) return;
  ops::ScaleInPlace(flat_grads, coefficient);
}

absl::Status ValidateMaxGradNorm(double max_grad_norm) {
  if (max_grad_norm >= 0.0 && std::isfinite(max_grad_norm)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--max_grad_norm must be a finite number >= 0 (0 disables clipping); got ", max_grad_norm));
}

}  // namespace xlmr::optim
