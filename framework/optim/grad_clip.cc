#include "framework/optim/grad_clip.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/ops/dispatch.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/optim.h"
#endif

namespace xlmr::optim {
namespace {

// torch's `total_norm + 1e-6` on a float32 tensor adds float(1e-6).
constexpr float kNormEpsilon = 1e-6f;

void CheckF32(const Tensor& tensor) {
  XLMR_CHECK(tensor.dtype() == DType::kF32) << "gradients must be f32";
}

}  // namespace

double SumOfSquaresRange(const float* values, int64_t n) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double value = values[i];
    sum += value * value;
  }
  return sum;
}

double GlobalL2Norm(const Tensor& flat_grads) {
  CheckF32(flat_grads);
  if (flat_grads.numel() == 0) return 0.0;
  const double sum_of_squares = ops::DispatchByDevice(
      "optim::GlobalL2Norm", flat_grads.device(),
      [&] { return SumOfSquaresRange(flat_grads.data<float>(), flat_grads.numel()); },
      XLMR_CUDA_KERNEL(kernels::cuda::SumOfSquares(flat_grads)));
  return std::sqrt(sum_of_squares);
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
  ops::DispatchByDevice(
      "optim::ClipGradNorm", flat_grads.device(),
      [&] {
        float* grads = flat_grads.data<float>();
        for (int64_t i = 0; i < flat_grads.numel(); ++i) grads[i] *= coefficient;
      },
      XLMR_CUDA_KERNEL(kernels::cuda::ScaleInPlace(flat_grads, coefficient)));
}

absl::Status ValidateMaxGradNorm(double max_grad_norm) {
  if (max_grad_norm >= 0.0 && std::isfinite(max_grad_norm)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--max_grad_norm must be a finite number >= 0 (0 disables clipping); got ", max_grad_norm));
}

}  // namespace xlmr::optim
