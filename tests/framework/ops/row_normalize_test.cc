// framework/ops/row_normalize.h on the CPU: the forward against a norm computed in double, the
// backward against central finite differences of the forward computed in double.
//
// Tolerances: forward 1e-6 (a float sum of 6 squares, a sqrt and two roundings per element:
// ~1e-7); backward 1e-6 against the double-precision analytic gradient the test derives by
// finite differences of its own double forward (step 1e-4: truncation ~1e-8), where a missing
// projection term or a wrong multiplier is off by O(0.1).
#include <cmath>
#include <vector>

#include "framework/ops/row_normalize.h"
#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using testing::RandomValues;
using testing::TensorFrom;

// (x / max(||x||, eps)) * multiplier in double.
std::vector<double> NormalizedRow(const std::vector<double>& x, double multiplier, double eps) {
  double squares = 0;
  for (double v : x) squares += v * v;
  const double denominator = std::max(std::sqrt(squares), eps);
  std::vector<double> y;
  for (double v : x) y.push_back(v / denominator * multiplier);
  return y;
}

TEST(NormalizeRowsTest, GivesRowsOfNormMultiplier) {
  const int64_t rows = 3, width = 6;
  const std::vector<float> x = RandomValues(rows * width, 11);
  const std::vector<float> y = ops::NormalizeRows(TensorFrom({rows, width}, DType::kF32, x), 20.0f).ToFloatVector();
  for (int64_t r = 0; r < rows; ++r) {
    const std::vector<double> expected =
        NormalizedRow(std::vector<double>(x.begin() + r * width, x.begin() + (r + 1) * width), 20.0, 1e-12);
    for (int64_t j = 0; j < width; ++j) EXPECT_NEAR(y[r * width + j], expected[j], 20 * 1e-6);
  }
}

TEST(NormalizeRowsTest, ZeroRowStaysZeroAsFNormalizeGivesIt) {
  const Tensor y = ops::NormalizeRows(Tensor::Zeros({1, 4}, DType::kF32));
  EXPECT_EQ(y.ToFloatVector(), (std::vector<float>(4, 0.0f)));
}

TEST(NormalizeRowsTest, BackwardMatchesFiniteDifferencesOfTheForward) {
  const int64_t rows = 2, width = 5;
  const double multiplier = 3.0;
  const std::vector<float> x = RandomValues(rows * width, 12);
  const std::vector<float> dy = RandomValues(rows * width, 13);
  Tensor dx = Tensor::Zeros({rows, width}, DType::kF32);
  ops::NormalizeRowsBackward(TensorFrom({rows, width}, DType::kF32, dy), TensorFrom({rows, width}, DType::kF32, x),
                             static_cast<float>(multiplier), &dx);
  const std::vector<float> got = dx.ToFloatVector();
  const double step = 1e-4;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> row(x.begin() + r * width, x.begin() + (r + 1) * width);
    for (int64_t j = 0; j < width; ++j) {
      // d/dx_j of sum_i dy_i * y_i.
      auto objective = [&](double shift) {
        std::vector<double> moved = row;
        moved[j] += shift;
        const std::vector<double> y = NormalizedRow(moved, multiplier, 1e-12);
        double total = 0;
        for (int64_t i = 0; i < width; ++i) total += dy[r * width + i] * y[i];
        return total;
      };
      const double expected = (objective(step) - objective(-step)) / (2 * step);
      EXPECT_NEAR(got[r * width + j], expected, 1e-5 * multiplier) << "row " << r << " column " << j;
    }
  }
}

TEST(NormalizeRowsTest, BackwardWritesIntoAView) {
  // Two row blocks' gradients land in one tensor: each call overwrites its rows only.
  Tensor dx = Tensor::Zeros({2, 3}, DType::kF32);
  Tensor second = dx.Slice(1, 2);
  const Tensor x = TensorFrom({1, 3}, DType::kF32, {3, 0, 4});
  ops::NormalizeRowsBackward(TensorFrom({1, 3}, DType::kF32, {1, 0, 0}), x, 1.0f, &second);
  const std::vector<float> values = dx.ToFloatVector();
  // u = (0.6, 0, 0.8), dy = e0: dx = (dy - u (u . dy)) / 5 = ((1 - 0.36), 0, -0.48) / 5.
  EXPECT_EQ(values[0], 0.0f);
  EXPECT_NEAR(values[3], 0.64 / 5, 1e-7);
  EXPECT_NEAR(values[5], -0.48 / 5, 1e-7);
}

}  // namespace
}  // namespace xlmr
