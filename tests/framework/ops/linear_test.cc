#include "framework/ops/linear.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using testing::Dot;
using testing::FiniteDifferenceGradient;
using testing::HalfBits;
using testing::MaxNormalisedError;
using testing::RandomValues;
using testing::RoundedToHalf;
using testing::TensorFrom;
using testing::ToDoubles;

// y[r, o] = sum_k x[r, k] * w[o, k] + b[o], in double (b empty: no bias).
std::vector<double> ReferenceLinear(const std::vector<double>& x, const std::vector<double>& w,
                                    const std::vector<double>& b, int64_t in, int64_t out) {
  const int64_t rows = static_cast<int64_t>(x.size()) / in;
  std::vector<double> y(rows * out);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t o = 0; o < out; ++o) {
      double sum = b.empty() ? 0.0 : b[o];
      for (int64_t k = 0; k < in; ++k) sum += x[r * in + k] * w[o * in + k];
      y[r * out + o] = sum;
    }
  }
  return y;
}

struct LinearCase {
  Shape x_shape;  // [..., in]
  int64_t out;
  bool with_bias;
};

class LinearGradientTest : public ::testing::TestWithParam<LinearCase> {};

// Forward tolerance 1e-5: fp32 dot products of <= 33 terms of size ~1 err by ~K * 6e-8.
// Backward tolerance 1e-4: the fp32 backward against double central differences (whose own
// error is ~1e-10); a wrong transpose or index gives errors of order 1.
TEST_P(LinearGradientTest, MatchesDoubleReferenceAndFiniteDifferences) {
  const LinearCase& c = GetParam();
  const int64_t in = c.x_shape.back();
  const int64_t rows = NumElements(c.x_shape) / in;
  const std::vector<float> x = RandomValues(rows * in, 1);
  const std::vector<float> w = RandomValues(c.out * in, 2);
  const std::vector<float> b = c.with_bias ? RandomValues(c.out, 3) : std::vector<float>();
  const std::vector<float> upstream = RandomValues(rows * c.out, 4);
  const Tensor bias = c.with_bias ? TensorFrom({c.out}, DType::kF32, b) : Tensor();
  const Tensor x_t = TensorFrom(c.x_shape, DType::kF32, x);
  const Tensor w_t = TensorFrom({c.out, in}, DType::kF32, w);

  const Tensor y = ops::Linear(x_t, w_t, bias, DType::kF32);
  Shape y_shape = c.x_shape;
  y_shape.back() = c.out;
  ASSERT_EQ(y.shape(), y_shape);
  EXPECT_LE(MaxNormalisedError(y.ToFloatVector(), ReferenceLinear(ToDoubles(x), ToDoubles(w),
                                                                  ToDoubles(b), in, c.out)),
            1e-5);

  Tensor dweight = Tensor::Zeros({c.out, in}, DType::kF32);
  Tensor dbias = Tensor::Zeros({c.out}, DType::kF32);
  const Tensor dx = ops::LinearBackward(TensorFrom(y_shape, DType::kF32, upstream), x_t, w_t,
                                        &dweight, c.with_bias ? &dbias : nullptr, DType::kF32);
  ASSERT_EQ(dx.shape(), c.x_shape);
  const std::vector<double> dy = ToDoubles(upstream);
  auto loss_of_x = [&](const std::vector<double>& p) {
    return Dot(dy, ReferenceLinear(p, ToDoubles(w), ToDoubles(b), in, c.out));
  };
  auto loss_of_w = [&](const std::vector<double>& p) {
    return Dot(dy, ReferenceLinear(ToDoubles(x), p, ToDoubles(b), in, c.out));
  };
  auto loss_of_b = [&](const std::vector<double>& p) {
    return Dot(dy, ReferenceLinear(ToDoubles(x), ToDoubles(w), p, in, c.out));
  };
  EXPECT_LE(
      MaxNormalisedError(dx.ToFloatVector(), FiniteDifferenceGradient(loss_of_x, ToDoubles(x))),
      1e-4);
  EXPECT_LE(MaxNormalisedError(dweight.ToFloatVector(),
                               FiniteDifferenceGradient(loss_of_w, ToDoubles(w))),
            1e-4);
  if (c.with_bias) {
    EXPECT_LE(MaxNormalisedError(dbias.ToFloatVector(),
                                 FiniteDifferenceGradient(loss_of_b, ToDoubles(b))),
              1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, LinearGradientTest,
                         ::testing::Values(LinearCase{{1, 1}, 1, true}, LinearCase{{3, 5}, 7, true},
                                           LinearCase{{2, 3, 4}, 6, false},
                                           LinearCase{{17, 33}, 9, true}));

// A backward with no outputs (out == 0) gives dx zero, a sum over no terms. dx is written
// without a zero fill when there are outputs, so a dirty buffer is released beforehand for the
// allocator to hand out again: a kernel that skips the GEMM and forgets the zeros returns its
// old contents.
TEST(LinearTest, EmptyProductsAreZeroEvenInAReusedBuffer) {
  {
    const Tensor dirty = TensorFrom({3, 2}, DType::kF32, std::vector<float>(6, 7.0f));
  }
  const Tensor x2 = TensorFrom({3, 2}, DType::kF32, RandomValues(6, 8));
  const Tensor w2 = Tensor::Zeros({0, 2}, DType::kF32);
  const Tensor dy = Tensor::Zeros({3, 0}, DType::kF32);
  Tensor dweight = Tensor::Zeros({0, 2}, DType::kF32);
  EXPECT_EQ(ops::LinearBackward(dy, x2, w2, &dweight, nullptr, DType::kF32).ToFloatVector(),
            std::vector<float>(6, 0.0f));
}

// Parameter gradients are accumulated: a second backward into the same buffers adds the same
// gradient again, so the buffers hold exactly twice the first result (g + g is exact).
TEST(LinearTest, ParameterGradientsAccumulate) {
  const Tensor x = TensorFrom({4, 3}, DType::kF32, RandomValues(12, 5));
  const Tensor w = TensorFrom({2, 3}, DType::kF32, RandomValues(6, 6));
  const Tensor dy = TensorFrom({4, 2}, DType::kF32, RandomValues(8, 7));
  Tensor dweight = Tensor::Zeros({2, 3}, DType::kF32);
  Tensor dbias = Tensor::Zeros({2}, DType::kF32);
  ops::LinearBackward(dy, x, w, &dweight, &dbias, DType::kF32);
  const std::vector<float> once_w = dweight.ToFloatVector();
  const std::vector<float> once_b = dbias.ToFloatVector();
  ops::LinearBackward(dy, x, w, &dweight, &dbias, DType::kF32);
  for (size_t i = 0; i < once_w.size(); ++i) EXPECT_EQ(dweight.ToFloatVector()[i], 2 * once_w[i]);
  for (size_t i = 0; i < once_b.size(); ++i) EXPECT_EQ(dbias.ToFloatVector()[i], 2 * once_b[i]);
}

// fp16 operands are exact in fp32, so the fp16 path runs the same fp32 GEMM as an fp32 call on
// the same values and differs only by the final rounding: bit-exact equality is required.
TEST(LinearTest, HalfPathRoundsTheFloatResultOnce) {
  const std::vector<float> x = RoundedToHalf(RandomValues(5 * 8, 8, -4.0f, 4.0f));
  const std::vector<float> w = RoundedToHalf(RandomValues(3 * 8, 9, -4.0f, 4.0f));
  const Tensor bias = TensorFrom({3}, DType::kF32, RandomValues(3, 10));
  const Tensor y16 = ops::Linear(TensorFrom({5, 8}, DType::kF16, x),
                                 TensorFrom({3, 8}, DType::kF16, w), bias, DType::kF16);
  const Tensor y32 = ops::Linear(TensorFrom({5, 8}, DType::kF32, x),
                                 TensorFrom({3, 8}, DType::kF32, w), bias, DType::kF32);
  EXPECT_EQ(HalfBits(y16), HalfBits(TensorFrom({5, 3}, DType::kF16, y32.ToFloatVector())));

  const std::vector<float> upstream = RoundedToHalf(RandomValues(15, 11));
  Tensor dw16 = Tensor::Zeros({3, 8}, DType::kF32);
  Tensor dw32 = Tensor::Zeros({3, 8}, DType::kF32);
  const Tensor dx16 = ops::LinearBackward(
      TensorFrom({5, 3}, DType::kF16, upstream), TensorFrom({5, 8}, DType::kF16, x),
      TensorFrom({3, 8}, DType::kF16, w), &dw16, nullptr, DType::kF16);
  const Tensor dx32 = ops::LinearBackward(
      TensorFrom({5, 3}, DType::kF32, upstream), TensorFrom({5, 8}, DType::kF32, x),
      TensorFrom({3, 8}, DType::kF32, w), &dw32, nullptr, DType::kF32);
  EXPECT_EQ(HalfBits(dx16), HalfBits(TensorFrom({5, 8}, DType::kF16, dx32.ToFloatVector())));
  EXPECT_EQ(dw16.ToFloatVector(), dw32.ToFloatVector());
}

TEST(LinearTest, HalfOutputOverflowsToInfinity) {
  const Tensor x = TensorFrom({1, 1}, DType::kF16, {300.0f});
  const Tensor w = TensorFrom({1, 1}, DType::kF16, {300.0f});
  EXPECT_TRUE(std::isinf(ops::Linear(x, w, Tensor(), DType::kF16).ToFloatVector()[0]));
  EXPECT_EQ(ops::Linear(x, w, Tensor(), DType::kF32).ToFloatVector()[0], 90000.0f);
}

TEST(LinearDeathTest, RejectsMismatchedShapes) {
  const Tensor x = Tensor::Zeros({2, 3}, DType::kF32);
  const Tensor w = Tensor::Zeros({4, 5}, DType::kF32);
  EXPECT_DEATH(ops::Linear(x, w, Tensor(), DType::kF32), "does not match weight");
  const Tensor w_ok = Tensor::Zeros({4, 3}, DType::kF32);
  EXPECT_DEATH(ops::Linear(x, w_ok, Tensor::Zeros({5}, DType::kF32), DType::kF32), "bias");
}

// A product over no inputs (in == 0) is refused by both backends (the CUDA GEMM needs K >= 1).
TEST(LinearDeathTest, RejectsAWeightWithoutInputs) {
  const Tensor x = Tensor::Zeros({3, 0}, DType::kF32);
  const Tensor w = Tensor::Zeros({2, 0}, DType::kF32);
  EXPECT_DEATH(ops::Linear(x, w, Tensor(), DType::kF32), "has no input columns");
}

}  // namespace
}  // namespace xlmr
