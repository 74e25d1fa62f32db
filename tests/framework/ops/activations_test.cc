#include "framework/ops/activations.h"

#include <cmath>
#include <functional>
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

std::vector<double> ReferenceGelu(const std::vector<double>& x) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = 0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0)));
  return y;
}

std::vector<double> ReferenceTanh(const std::vector<double>& x) {
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = std::tanh(x[i]);
  return y;
}

class ActivationShapeTest : public ::testing::TestWithParam<Shape> {};

// Forward tolerance 1e-6: one fp32 erf/tanh/exp per element (a few ulps, ~1e-7 relative to
// the output scale). Backward tolerance 1e-4: fp32 derivative against double central
// differences; the tanh-approximate GELU derivative differs from the exact one by ~1e-3.
TEST_P(ActivationShapeTest, GeluMatchesDoubleReferenceAndFiniteDifferences) {
  const Shape& shape = GetParam();
  const std::vector<float> x = RandomValues(NumElements(shape), 41, -4.0f, 4.0f);
  const std::vector<float> upstream = RandomValues(NumElements(shape), 42);
  const Tensor x_t = TensorFrom(shape, DType::kF32, x);
  const Tensor y = ops::Gelu(x_t);
  ASSERT_EQ(y.shape(), shape);
  EXPECT_LE(MaxNormalisedError(y.ToFloatVector(), ReferenceGelu(ToDoubles(x))), 1e-6);
  const Tensor dx = ops::GeluBackward(TensorFrom(shape, DType::kF32, upstream), x_t);
  auto loss = [&](const std::vector<double>& p) {
    return Dot(ToDoubles(upstream), ReferenceGelu(p));
  };
  EXPECT_LE(MaxNormalisedError(dx.ToFloatVector(), FiniteDifferenceGradient(loss, ToDoubles(x))),
            1e-4);
}

TEST_P(ActivationShapeTest, TanhMatchesDoubleReferenceAndFiniteDifferences) {
  const Shape& shape = GetParam();
  const std::vector<float> x = RandomValues(NumElements(shape), 43, -3.0f, 3.0f);
  const std::vector<float> upstream = RandomValues(NumElements(shape), 44);
  const Tensor y = ops::Tanh(TensorFrom(shape, DType::kF32, x));
  EXPECT_LE(MaxNormalisedError(y.ToFloatVector(), ReferenceTanh(ToDoubles(x))), 1e-6);
  // The backward takes the forward's output, as nn.Tanh saves it.
  const Tensor dx = ops::TanhBackward(TensorFrom(shape, DType::kF32, upstream), y);
  auto loss = [&](const std::vector<double>& p) {
    return Dot(ToDoubles(upstream), ReferenceTanh(p));
  };
  EXPECT_LE(MaxNormalisedError(dx.ToFloatVector(), FiniteDifferenceGradient(loss, ToDoubles(x))),
            1e-4);
}

// One element; an odd count; more than one streaming chunk (1024) with a ragged tail.
INSTANTIATE_TEST_SUITE_P(Shapes, ActivationShapeTest,
                         ::testing::Values(Shape{1}, Shape{3, 7}, Shape{2, 1100}));

// fp16 storage: computed in fp32 on exactly converted inputs, so the fp16 outputs must be the
// fp32 outputs rounded once, bit for bit.
TEST(ActivationsTest, HalfPathRoundsTheFloatResultOnce) {
  const Shape shape = {4, 9};
  const std::vector<float> x = RoundedToHalf(RandomValues(36, 45, -5.0f, 5.0f));
  const std::vector<float> upstream = RoundedToHalf(RandomValues(36, 46));
  const Tensor x16 = TensorFrom(shape, DType::kF16, x), x32 = TensorFrom(shape, DType::kF32, x);
  const Tensor dy16 = TensorFrom(shape, DType::kF16, upstream);
  const Tensor dy32 = TensorFrom(shape, DType::kF32, upstream);
  auto rounded = [&](const Tensor& t) {
    return HalfBits(TensorFrom(shape, DType::kF16, t.ToFloatVector()));
  };
  EXPECT_EQ(HalfBits(ops::Gelu(x16)), rounded(ops::Gelu(x32)));
  EXPECT_EQ(HalfBits(ops::GeluBackward(dy16, x16)), rounded(ops::GeluBackward(dy32, x32)));
  const Tensor t16 = ops::Tanh(x16);
  EXPECT_EQ(HalfBits(t16), rounded(ops::Tanh(x32)));
  // Backward from the stored fp16 output (as under autocast), computed in fp32.
  const Tensor t16_as_f32 = TensorFrom(shape, DType::kF32, t16.ToFloatVector());
  EXPECT_EQ(HalfBits(ops::TanhBackward(dy16, t16)), rounded(ops::TanhBackward(dy32, t16_as_f32)));
}

TEST(ActivationsTest, HalfGradientOverflowsToInfinity) {
  const Tensor x = TensorFrom({1}, DType::kF16, {2.0f});
  const Tensor dy = TensorFrom({1}, DType::kF16, {65504.0f});
  // GELU'(2) ~ 1.086, so 65504 * 1.086 exceeds the fp16 range.
  EXPECT_TRUE(std::isinf(ops::GeluBackward(dy, x).ToFloatVector()[0]));
}

TEST(ActivationsDeathTest, RejectsMismatchedShapes) {
  EXPECT_DEATH(ops::GeluBackward(Tensor::Zeros({3}, DType::kF32), Tensor::Zeros({4}, DType::kF32)),
               "same shape");
}

}  // namespace
}  // namespace xlmr
