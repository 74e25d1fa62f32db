// ops::DropoutAddLayerNorm and its backward on the CPU, against a double-precision reference
// written here from the definitions: the mask is framework/random's DropoutUniform(key, slot *
// width + column) >= p (the row-placed mask of ops::DropoutRows), kept values are scaled by
// 1 / (1 - p), and torch.nn.LayerNorm normalises the sum with the residual. The gradients are
// central differences of that reference.
//
// Tolerance: 1e-4 of the result's largest magnitude (layer_norm_test's bound for the fp32
// backward; the forward rounds each operation to fp32 once, ~1e-7). A dropped element has a zero
// gradient in exact arithmetic; a backward that ignored the mask, scaled by the wrong factor or
// drew another row's mask is off by the element's whole gradient.
#include "framework/ops/residual_layer_norm.h"

#include <cmath>
#include <vector>

#include "framework/random/philox.h"
#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using testing::Dot;
using testing::FiniteDifferenceGradient;
using testing::MaxNormalisedError;
using testing::RandomValues;
using testing::TensorFrom;
using testing::ToDoubles;

constexpr float kEps = 1e-5f;
constexpr float kP = 0.3f;
constexpr int64_t kRows = 3, kWidth = 12;
const std::vector<int32_t> kSlots = {4, 0, 2};  // out of order, as packed rows are placed
constexpr int64_t kNumSlots = 6;
const DropoutKey kKey{1234, 5, 1, 7, 2};

// LayerNorm(dropout(x) + residual) in double.
std::vector<double> Reference(const std::vector<double>& x, const std::vector<double>& residual,
                              const std::vector<double>& gamma, const std::vector<double>& beta) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < kRows; ++r) {
    std::vector<double> sum(kWidth);
    for (int64_t j = 0; j < kWidth; ++j) {
      const bool keep = DropoutUniform(kKey, int64_t{kSlots[r]} * kWidth + j) >= kP;
      sum[j] = (keep ? x[r * kWidth + j] / (1.0 - kP) : 0.0) + residual[r * kWidth + j];
    }
    double mean = 0.0, variance = 0.0;
    for (double v : sum) mean += v / kWidth;
    for (double v : sum) variance += (v - mean) * (v - mean) / kWidth;
    for (int64_t j = 0; j < kWidth; ++j) {
      y[r * kWidth + j] = (sum[j] - mean) / std::sqrt(variance + kEps) * gamma[j] + beta[j];
    }
  }
  return y;
}

TEST(ResidualLayerNormTest, ForwardAndBackwardMatchTheDefinition) {
  const Shape shape = {kRows, kWidth};
  const std::vector<float> x = RandomValues(kRows * kWidth, 1), residual = RandomValues(kRows * kWidth, 2, -2, 2);
  const std::vector<float> gamma = RandomValues(kWidth, 3, 0.5f, 1.5f), beta = RandomValues(kWidth, 4);
  const std::vector<float> dy = RandomValues(kRows * kWidth, 5);
  Tensor slots = Tensor::Zeros({kRows}, DType::kI32);
  for (int64_t r = 0; r < kRows; ++r) slots.data<int32_t>()[r] = kSlots[r];
  const Tensor gamma_t = TensorFrom({kWidth}, DType::kF32, gamma), beta_t = TensorFrom({kWidth}, DType::kF32, beta);
  const ops::ResidualLayerNormOutput out =
      ops::DropoutAddLayerNorm(TensorFrom(shape, DType::kF32, x), TensorFrom(shape, DType::kF32, residual), kP, kKey,
                               slots, kNumSlots, gamma_t, beta_t, kEps, DType::kF32);
  const std::vector<double> xd = ToDoubles(x), rd = ToDoubles(residual), gd = ToDoubles(gamma), bd = ToDoubles(beta);
  EXPECT_LE(MaxNormalisedError(out.y.ToFloatVector(), Reference(xd, rd, gd, bd)), 1e-5);
  EXPECT_FALSE(out.y_half.defined());

  Tensor dgamma = Tensor::Zeros({kWidth}, DType::kF32), dbeta = Tensor::Zeros({kWidth}, DType::kF32);
  const ops::ResidualLayerNormGrads grads =
      ops::DropoutAddLayerNormBackward(TensorFrom(shape, DType::kF32, dy), out.sum, out.mean, out.rstd, gamma_t, kP,
                                       kKey, slots, kNumSlots, DType::kF32, &dgamma, &dbeta);
  const std::vector<double> w = ToDoubles(dy);
  auto loss_of_x = [&](const std::vector<double>& point) { return Dot(w, Reference(point, rd, gd, bd)); };
  auto loss_of_residual = [&](const std::vector<double>& point) { return Dot(w, Reference(xd, point, gd, bd)); };
  auto loss_of_gamma = [&](const std::vector<double>& point) { return Dot(w, Reference(xd, rd, point, bd)); };
  EXPECT_LE(MaxNormalisedError(grads.d_x.ToFloatVector(), FiniteDifferenceGradient(loss_of_x, xd)), 1e-4);
  EXPECT_LE(MaxNormalisedError(grads.d_sum.ToFloatVector(), FiniteDifferenceGradient(loss_of_residual, rd)), 1e-4);
  EXPECT_LE(MaxNormalisedError(dgamma.ToFloatVector(), FiniteDifferenceGradient(loss_of_gamma, gd)), 1e-4);
  // Some elements dropped, some kept: both kinds are checked above.
  int dropped = 0;
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t j = 0; j < kWidth; ++j) dropped += DropoutUniform(kKey, int64_t{kSlots[r]} * kWidth + j) < kP;
  }
  EXPECT_GT(dropped, 0);
  EXPECT_LT(dropped, kRows * kWidth);
}

}  // namespace
}  // namespace xlmr
