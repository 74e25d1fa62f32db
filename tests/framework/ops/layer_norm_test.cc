#include "framework/ops/layer_norm.h"

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

constexpr float kEps = 1e-5f;

// torch.nn.LayerNorm in double: biased variance, eps inside the square root.
std::vector<double> ReferenceLayerNorm(const std::vector<double>& x,
                                       const std::vector<double>& gamma,
                                       const std::vector<double>& beta) {
  const size_t width = gamma.size();
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / width; ++r) {
    const double* row = &x[r * width];
    double mean = 0.0, variance = 0.0;
    for (size_t j = 0; j < width; ++j) mean += row[j] / width;
    for (size_t j = 0; j < width; ++j) variance += (row[j] - mean) * (row[j] - mean) / width;
    const double rstd = 1.0 / std::sqrt(variance + kEps);
    for (size_t j = 0; j < width; ++j) {
      y[r * width + j] = (row[j] - mean) * rstd * gamma[j] + beta[j];
    }
  }
  return y;
}

class LayerNormGradientTest : public ::testing::TestWithParam<Shape> {};

// Forward tolerance 1e-5: fp32 normalisation of O(1) values (statistics summed in double)
// errs by a few ulps of fp32 (~1e-7 relative). Backward tolerance 1e-4: fp32 backward against
// double central differences (error ~1e-10); a missing term of the LayerNorm backward (e.g.
// the mean of g * xhat) shows up at order 1e-1.
TEST_P(LayerNormGradientTest, MatchesDoubleReferenceAndFiniteDifferences) {
  const Shape& shape = GetParam();
  const int64_t width = shape.back();
  const int64_t count = NumElements(shape);
  const std::vector<float> x = RandomValues(count, 21, -2.0f, 2.0f);
  const std::vector<float> gamma = RandomValues(width, 22, 0.5f, 1.5f);
  const std::vector<float> beta = RandomValues(width, 23);
  const std::vector<float> upstream = RandomValues(count, 24);
  const Tensor x_t = TensorFrom(shape, DType::kF32, x);
  const Tensor gamma_t = TensorFrom({width}, DType::kF32, gamma);
  const ops::LayerNormOutput out =
      ops::LayerNorm(x_t, gamma_t, TensorFrom({width}, DType::kF32, beta), kEps, DType::kF32);
  ASSERT_EQ(out.y.shape(), shape);
  ASSERT_EQ(out.mean.shape(), (Shape{count / width}));
  EXPECT_LE(MaxNormalisedError(out.y.ToFloatVector(),
                               ReferenceLayerNorm(ToDoubles(x), ToDoubles(gamma), ToDoubles(beta))),
            1e-5);

  Tensor dgamma = Tensor::Zeros({width}, DType::kF32);
  Tensor dbeta = Tensor::Zeros({width}, DType::kF32);
  const Tensor dx = ops::LayerNormBackward(TensorFrom(shape, DType::kF32, upstream), x_t, gamma_t,
                                           out.mean, out.rstd, &dgamma, &dbeta);
  const std::vector<double> dy = ToDoubles(upstream);
  auto loss_of_x = [&](const std::vector<double>& p) {
    return Dot(dy, ReferenceLayerNorm(p, ToDoubles(gamma), ToDoubles(beta)));
  };
  auto loss_of_gamma = [&](const std::vector<double>& p) {
    return Dot(dy, ReferenceLayerNorm(ToDoubles(x), p, ToDoubles(beta)));
  };
  auto loss_of_beta = [&](const std::vector<double>& p) {
    return Dot(dy, ReferenceLayerNorm(ToDoubles(x), ToDoubles(gamma), p));
  };
  EXPECT_LE(
      MaxNormalisedError(dx.ToFloatVector(), FiniteDifferenceGradient(loss_of_x, ToDoubles(x))),
      1e-4);
  EXPECT_LE(MaxNormalisedError(dgamma.ToFloatVector(),
                               FiniteDifferenceGradient(loss_of_gamma, ToDoubles(gamma))),
            1e-4);
  EXPECT_LE(MaxNormalisedError(dbeta.ToFloatVector(),
                               FiniteDifferenceGradient(loss_of_beta, ToDoubles(beta))),
            1e-4);
}

// One row; an odd width; rank 3 (rows span two leading dimensions); width 1 (y == beta); a
// width of many 8-lane groups and a tail (the kernels sum rows in 8 interleaved lanes).
INSTANTIATE_TEST_SUITE_P(Shapes, LayerNormGradientTest,
                         ::testing::Values(Shape{1, 8}, Shape{5, 7}, Shape{2, 3, 13}, Shape{4, 1},
                                           Shape{3, 130}));

// A constant row has zero variance: y must be exactly beta (finite, no NaN from 0 * inf).
TEST(LayerNormTest, ConstantRowGivesBeta) {
  const Tensor x = TensorFrom({1, 4}, DType::kF32, {3.0f, 3.0f, 3.0f, 3.0f});
  const Tensor gamma = TensorFrom({4}, DType::kF32, {1.0f, 2.0f, 3.0f, 4.0f});
  const Tensor beta = TensorFrom({4}, DType::kF32, {0.5f, -0.5f, 1.0f, 0.0f});
  const ops::LayerNormOutput out = ops::LayerNorm(x, gamma, beta, kEps, DType::kF32);
  EXPECT_EQ(out.y.ToFloatVector(), beta.ToFloatVector());
  EXPECT_FLOAT_EQ(out.rstd.ToFloatVector()[0], 1.0f / std::sqrt(kEps));
}

// fp16 storage: the half path computes in fp32 on the same (exactly converted) values, so its
// outputs must be the fp32 outputs rounded once, bit for bit; dx comes back in x's dtype.
TEST(LayerNormTest, HalfPathRoundsTheFloatResultOnce) {
  const Shape shape = {3, 10};
  const std::vector<float> x = RoundedToHalf(RandomValues(30, 25, -3.0f, 3.0f));
  const std::vector<float> upstream = RoundedToHalf(RandomValues(30, 26));
  const Tensor gamma = TensorFrom({10}, DType::kF32, RandomValues(10, 27));
  const Tensor beta = TensorFrom({10}, DType::kF32, RandomValues(10, 28));
  const Tensor x16 = TensorFrom(shape, DType::kF16, x);
  const Tensor x32 = TensorFrom(shape, DType::kF32, x);
  const ops::LayerNormOutput out16 = ops::LayerNorm(x16, gamma, beta, kEps, DType::kF16);
  const ops::LayerNormOutput out32 = ops::LayerNorm(x32, gamma, beta, kEps, DType::kF32);
  EXPECT_EQ(HalfBits(out16.y), HalfBits(TensorFrom(shape, DType::kF16, out32.y.ToFloatVector())));
  EXPECT_EQ(out16.rstd.ToFloatVector(), out32.rstd.ToFloatVector());

  Tensor dgamma16 = Tensor::Zeros({10}, DType::kF32), dbeta16 = Tensor::Zeros({10}, DType::kF32);
  Tensor dgamma32 = Tensor::Zeros({10}, DType::kF32), dbeta32 = Tensor::Zeros({10}, DType::kF32);
  const Tensor dx16 = ops::LayerNormBackward(TensorFrom(shape, DType::kF16, upstream), x16, gamma,
                                             out16.mean, out16.rstd, &dgamma16, &dbeta16);
  const Tensor dx32 = ops::LayerNormBackward(TensorFrom(shape, DType::kF32, upstream), x32, gamma,
                                             out32.mean, out32.rstd, &dgamma32, &dbeta32);
  ASSERT_EQ(dx16.dtype(), DType::kF16);
  EXPECT_EQ(HalfBits(dx16), HalfBits(TensorFrom(shape, DType::kF16, dx32.ToFloatVector())));
  EXPECT_EQ(dgamma16.ToFloatVector(), dgamma32.ToFloatVector());
  EXPECT_EQ(dbeta16.ToFloatVector(), dbeta32.ToFloatVector());
}

TEST(LayerNormTest, HalfOutputOverflowsToInfinity) {
  const Tensor x = TensorFrom({1, 2}, DType::kF32, {-1.0f, 1.0f});
  const Tensor gamma = TensorFrom({2}, DType::kF32, {1.0f, 70000.0f});
  const Tensor beta = Tensor::Zeros({2}, DType::kF32);
  const std::vector<float> y = ops::LayerNorm(x, gamma, beta, kEps, DType::kF16).y.ToFloatVector();
  EXPECT_TRUE(std::isinf(y[1]));
}

// Parameter gradients accumulate (+=): two backward calls give exactly twice one call.
TEST(LayerNormTest, ParameterGradientsAccumulate) {
  const Tensor x = TensorFrom({2, 5}, DType::kF32, RandomValues(10, 29));
  const Tensor dy = TensorFrom({2, 5}, DType::kF32, RandomValues(10, 30));
  const Tensor gamma = TensorFrom({5}, DType::kF32, RandomValues(5, 31));
  const ops::LayerNormOutput out =
      ops::LayerNorm(x, gamma, Tensor::Zeros({5}, DType::kF32), kEps, DType::kF32);
  Tensor dgamma = Tensor::Zeros({5}, DType::kF32), dbeta = Tensor::Zeros({5}, DType::kF32);
  ops::LayerNormBackward(dy, x, gamma, out.mean, out.rstd, &dgamma, &dbeta);
  const std::vector<float> once_gamma = dgamma.ToFloatVector(), once_beta = dbeta.ToFloatVector();
  ops::LayerNormBackward(dy, x, gamma, out.mean, out.rstd, &dgamma, &dbeta);
  for (int j = 0; j < 5; ++j) {
    EXPECT_EQ(dgamma.ToFloatVector()[j], 2 * once_gamma[j]);
    EXPECT_EQ(dbeta.ToFloatVector()[j], 2 * once_beta[j]);
  }
}

TEST(LayerNormDeathTest, RejectsMismatchedGamma) {
  const Tensor x = Tensor::Zeros({2, 4}, DType::kF32);
  EXPECT_DEATH(ops::LayerNorm(x, Tensor::Zeros({3}, DType::kF32), Tensor::Zeros({3}, DType::kF32),
                              kEps, DType::kF32),
               "gamma must have shape");
}

}  // namespace
}  // namespace xlmr
