#include "framework/optim/grad_clip.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/lane_sums.h"
#include "kernels/cpu/parallel.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/optim.h"
#endif

namespace xlmr::optim {
namespace {

using kernels::cpu::CombineLanes;
using kernels::cpu::kSumLanes;

// torch's `total_norm + 1e-6` on a float32 tensor adds float(1e-6).
constexpr float kNormEpsilon = 1e-6f;

void CheckF32(const Tensor& tensor) {
  XLMR_CHECK(tensor.dtype() == DType::kF32) << "gradients must be f32";
}

// Elements per block of a pass over the flat gradients. The sum of squares sums blocks on the
// CPU threads and adds their sums in block order, so its result depends on n alone, never on
// the thread count.
constexpr int64_t kBlock = 1 << 15;

// The sum of one block in kernels/cpu/lane_sums.h's lane order. A product of two floats is
// exact in double, so the compiler's choice between fma and
// multiply-then-add (and between instruction sets: target_clones) cannot change a bit.
__attribute__((target_clones("arch=x86-64-v4", "arch=haswell", "default")))
double BlockSumOfSquares(const float* values, int64_t n) {
  double lanes[kSumLanes] = {};
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
    for (int64_t lane = 0; lane < kSumLanes; ++lane) {
      const double value = values[i + lane];
      lanes[lane] += value * value;
    }
  }
  for (int64_t lane = 0; i < n; ++i, ++lane) {
    const double value = values[i];
    lanes[lane] += value * value;
  }
  return CombineLanes(lanes);
}

__attribute__((target_clones("arch=x86-64-v4", "arch=haswell", "default")))
void ScaleRange(float* values, int64_t n, float factor) {
  for (int64_t i = 0; i < n; ++i) values[i] *= factor;
}

}  // namespace

double SumOfSquaresRange(const float* values, int64_t n) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<double> block_sums(static_cast<size_t>(blocks));
  kernels::cpu::ParallelFor(blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) {
      const int64_t first = block * kBlock;
      block_sums[block] = BlockSumOfSquares(values + first, std::min(kBlock, n - first));
    }
  });
  double sum = 0.0;
  for (const double block_sum : block_sums) sum += block_sum;
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
        kernels::cpu::ParallelFor(flat_grads.numel(), kBlock, [&](int64_t begin, int64_t end) {
          ScaleRange(grads + begin, end - begin, coefficient);
        });
      },
      XLMR_CUDA_KERNEL(kernels::cuda::ScaleInPlace(flat_grads, coefficient)));
}

absl::Status ValidateMaxGradNorm(double max_grad_norm) {
  if (max_grad_norm >= 0.0 && std::isfinite(max_grad_norm)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--max_grad_norm must be a finite number >= 0 (0 disables clipping); got ", max_grad_norm));
}

}  // namespace xlmr::optim
