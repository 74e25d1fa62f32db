#include "framework/ops/loss.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <vector>

#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using testing::FiniteDifferenceGradient;
using testing::MaxNormalisedError;
using testing::RandomValues;
using testing::RoundedToHalf;
using testing::TensorFrom;
using testing::ToDoubles;

constexpr int32_t kIgnore = -100;

Tensor Labels(const std::vector<int32_t>& values) {
  Tensor labels = Tensor::Zeros({static_cast<int64_t>(values.size())}, DType::kI32);
  std::copy(values.begin(), values.end(), labels.data<int32_t>());
  return labels;
}

// Double-precision references, written the textbook way.
double ReferenceCrossEntropySum(const std::vector<double>& logits,
                                const std::vector<int32_t>& labels, int64_t classes) {
  double total = 0.0;
  for (size_t r = 0; r < labels.size(); ++r) {
    if (labels[r] == kIgnore) continue;
    const double* row = logits.data() + r * classes;
    const double row_max = *std::max_element(row, row + classes);
    double sum = 0.0;
    for (int64_t j = 0; j < classes; ++j) sum += std::exp(row[j] - row_max);
    total += row_max + std::log(sum) - row[labels[r]];
  }
  return total;
}

double ReferenceMseSum(const std::vector<double>& p, const std::vector<double>& t) {
  double total = 0.0;
  for (size_t i = 0; i < p.size(); ++i) total += (p[i] - t[i]) * (p[i] - t[i]);
  return total;
}

double ReferenceBceSum(const std::vector<double>& x, const std::vector<double>& t) {
  double total = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double sigmoid = 1.0 / (1.0 + std::exp(-x[i]));
    total -= t[i] * std::log(sigmoid) + (1.0 - t[i]) * std::log(1.0 - sigmoid);
  }
  return total;
}

struct LossCase {
  int64_t rows, classes;
  std::vector<int32_t> labels;  // cross-entropy labels (rows of them)
};

void PrintTo(const LossCase& c, std::ostream* os) { *os << c.rows << "x" << c.classes; }

class LossGradientTest : public ::testing::TestWithParam<LossCase> {};

// Forward tolerance 1e-6 relative: per-term fp32 losses (log-sum-exp, squares, log1p) err by a
// few 1e-7 relative and are summed in double. Backward tolerance 1e-5 (max-abs-normalised):
// fp32 softmax / sigmoid terms against double central differences (~1e-10); a wrong term
// (missing scale, sign, one-hot) is of order 0.1 and more.
constexpr float kScale = 0.37f;  // stands for loss_scale / global count

TEST_P(LossGradientTest, CrossEntropyMatchesReferenceAndFiniteDifferences) {
  const LossCase& c = GetParam();
  const std::vector<float> x = RandomValues(c.rows * c.classes, 21, -4.0f, 4.0f);
  const Tensor logits = TensorFrom({c.rows, c.classes}, DType::kF32, x);
  const ops::LossSum loss = ops::CrossEntropyLoss(logits, Labels(c.labels));
  const double expected = ReferenceCrossEntropySum(ToDoubles(x), c.labels, c.classes);
  EXPECT_NEAR(loss.sum, expected, 1e-6 * std::max(1.0, std::fabs(expected)));
  EXPECT_EQ(loss.count, std::count_if(c.labels.begin(), c.labels.end(),
                                      [](int32_t l) { return l != kIgnore; }));

  const Tensor dlogits = ops::CrossEntropyBackward(logits, Labels(c.labels), kScale);
  ASSERT_EQ(dlogits.dtype(), DType::kF32);
  const std::vector<double> fd = FiniteDifferenceGradient(
      [&](const std::vector<double>& p) {
        return kScale * ReferenceCrossEntropySum(p, c.labels, c.classes);
      },
      ToDoubles(x));
  const std::vector<float> analytic = dlogits.ToFloatVector();
  if (c.classes > 1) {  // with one class every gradient is zero (checked below)
    EXPECT_LE(MaxNormalisedError(analytic, fd), 1e-5);
  }
  for (int64_t r = 0; r < c.rows; ++r) {
    for (int64_t j = 0; j < c.classes; ++j) {
      if (c.labels[r] == kIgnore || c.classes == 1) {  // no gradient: ignored, or softmax = 1
        EXPECT_EQ(analytic[r * c.classes + j], 0.0f);
      }
    }
  }
}

TEST_P(LossGradientTest, MseMatchesReferenceAndFiniteDifferences) {
  const LossCase& c = GetParam();
  const std::vector<float> p = RandomValues(c.rows * c.classes, 22, -3.0f, 3.0f);
  const std::vector<float> t = RandomValues(c.rows * c.classes, 23, -3.0f, 3.0f);
  const Tensor predictions = TensorFrom({c.rows, c.classes}, DType::kF32, p);
  const Tensor targets = TensorFrom({c.rows, c.classes}, DType::kF32, t);
  const ops::LossSum loss = ops::MseLoss(predictions, targets);
  const double expected = ReferenceMseSum(ToDoubles(p), ToDoubles(t));
  EXPECT_NEAR(loss.sum, expected, 1e-6 * std::max(1.0, expected));
  EXPECT_EQ(loss.count, c.rows * c.classes);
  const std::vector<double> fd = FiniteDifferenceGradient(
      [&](const std::vector<double>& x) { return kScale * ReferenceMseSum(x, ToDoubles(t)); },
      ToDoubles(p));
  EXPECT_LE(MaxNormalisedError(ops::MseBackward(predictions, targets, kScale).ToFloatVector(), fd),
            1e-5);
}

TEST_P(LossGradientTest, BceWithLogitsMatchesReferenceAndFiniteDifferences) {
  const LossCase& c = GetParam();
  const std::vector<float> x = RandomValues(c.rows * c.classes, 24, -6.0f, 6.0f);
  std::vector<float> t = RandomValues(c.rows * c.classes, 25, 0.0f, 1.0f);
  t[0] = 1.0f;  // hard labels as well as soft ones
  if (t.size() > 1) t[1] = 0.0f;
  const Tensor logits = TensorFrom({c.rows, c.classes}, DType::kF32, x);
  const Tensor targets = TensorFrom({c.rows, c.classes}, DType::kF32, t);
  const ops::LossSum loss = ops::BceWithLogitsLoss(logits, targets);
  const double expected = ReferenceBceSum(ToDoubles(x), ToDoubles(t));
  EXPECT_NEAR(loss.sum, expected, 1e-6 * std::max(1.0, expected));
  EXPECT_EQ(loss.count, c.rows * c.classes);
  const std::vector<double> fd = FiniteDifferenceGradient(
      [&](const std::vector<double>& p) { return kScale * ReferenceBceSum(p, ToDoubles(t)); },
      ToDoubles(x));
  // Absolute tolerance 1e-6 * scale: each entry is scale * (sigmoid(x) - t) with fp32 sigmoid
  // off by <= 1.2e-7, and when sigmoid(x) ~ t the difference cancels, so a relative bound
  // would be meaningless for confidently right logits (as in torch, which computes the same).
  const std::vector<float> analytic =
      ops::BceWithLogitsBackward(logits, targets, kScale).ToFloatVector();
  for (size_t i = 0; i < fd.size(); ++i) EXPECT_NEAR(analytic[i], fd[i], 1e-6 * kScale) << i;
}

INSTANTIATE_TEST_SUITE_P(Shapes, LossGradientTest,
                         ::testing::Values(LossCase{1, 1, {0}},  // one logit
                                           LossCase{1, 3, {2}},  // one row
                                           LossCase{4, 5, {1, kIgnore, 4, 0}},
                                           LossCase{3, 2, {kIgnore, 1, 1}},  // binary
                                           LossCase{7, 3, {0, 1, 2, 2, 1, 0, kIgnore}}));

TEST(LossTest, CrossEntropyIsStableForHugeLogits) {
  const Tensor logits = TensorFrom({2, 3}, DType::kF32, {1e4f, 0.0f, -1e4f, -1e4f, -1e4f, 1e4f});
  const ops::LossSum loss = ops::CrossEntropyLoss(logits, Labels({1, 2}));
  EXPECT_EQ(loss.sum, 1e4);  // row 0: 1e4 - 0 exactly; row 1: log 1 = 0
  const std::vector<float> d =
      ops::CrossEntropyBackward(logits, Labels({1, 2}), 1.0f).ToFloatVector();
  EXPECT_EQ(d, (std::vector<float>{1.0f, -1.0f, 0.0f, 0.0f, 0.0f, 0.0f}));
}

TEST(LossTest, BceWithLogitsIsStableForHugeLogits) {
  const Tensor logits = TensorFrom({1, 4}, DType::kF32, {100.0f, -100.0f, 100.0f, -100.0f});
  const Tensor targets = TensorFrom({1, 4}, DType::kF32, {0.0f, 1.0f, 1.0f, 0.0f});
  // Two confidently wrong terms cost |x| each; the right ones cost log1p(e^-100) ~ 4e-44.
  EXPECT_NEAR(ops::BceWithLogitsLoss(logits, targets).sum, 200.0, 1e-9);
  EXPECT_EQ(ops::BceWithLogitsBackward(logits, targets, 1.0f).ToFloatVector(),
            (std::vector<float>{1.0f, -1.0f, 0.0f, 0.0f}));
}

// f16 logits are read exactly: the losses and gradients equal those of the same (rounded)
// values in f32, bit for bit.
TEST(LossTest, HalfLogitsGiveTheResultsOfTheirExactValues) {
  const std::vector<float> x = RoundedToHalf(RandomValues(12, 26, -5.0f, 5.0f));
  const std::vector<float> t = RandomValues(12, 27, 0.0f, 1.0f);
  const Tensor half = TensorFrom({4, 3}, DType::kF16, x), full = TensorFrom({4, 3}, DType::kF32, x);
  const Tensor targets = TensorFrom({4, 3}, DType::kF32, t);
  const Tensor labels = Labels({2, 0, kIgnore, 1});
  EXPECT_EQ(ops::CrossEntropyLoss(half, labels).sum, ops::CrossEntropyLoss(full, labels).sum);
  EXPECT_EQ(ops::CrossEntropyBackward(half, labels, 0.5f).ToFloatVector(),
            ops::CrossEntropyBackward(full, labels, 0.5f).ToFloatVector());
  EXPECT_EQ(ops::MseLoss(half, targets).sum, ops::MseLoss(full, targets).sum);
  EXPECT_EQ(ops::MseBackward(half, targets, 0.5f).ToFloatVector(),
            ops::MseBackward(full, targets, 0.5f).ToFloatVector());
  EXPECT_EQ(ops::BceWithLogitsLoss(half, targets).sum, ops::BceWithLogitsLoss(full, targets).sum);
  EXPECT_EQ(ops::BceWithLogitsBackward(half, targets, 0.5f).ToFloatVector(),
            ops::BceWithLogitsBackward(full, targets, 0.5f).ToFloatVector());
}

// The accumulation contract: micro-batch gradients with scale = 1 / (global count) add up to
// the gradient of the mean over the whole batch (rows are independent, so bit for bit).
TEST(LossTest, MicroBatchGradientsAddUpToTheGlobalMeanGradient) {
  const std::vector<float> x = RandomValues(12, 28);
  const Tensor logits = TensorFrom({4, 3}, DType::kF32, x);
  const std::vector<int32_t> labels = {1, kIgnore, 0, 2};
  const ops::LossSum whole = ops::CrossEntropyLoss(logits, Labels(labels));
  ASSERT_EQ(whole.count, 3);
  const float scale = 1.0f / static_cast<float>(whole.count);
  const std::vector<float> expected =
      ops::CrossEntropyBackward(logits, Labels(labels), scale).ToFloatVector();
  std::vector<float> micro =
      ops::CrossEntropyBackward(logits.Slice(0, 2), Labels({1, kIgnore}), scale).ToFloatVector();
  const std::vector<float> second =
      ops::CrossEntropyBackward(logits.Slice(2, 4), Labels({0, 2}), scale).ToFloatVector();
  micro.insert(micro.end(), second.begin(), second.end());
  EXPECT_EQ(micro, expected);
  const double micro_sum = ops::CrossEntropyLoss(logits.Slice(0, 2), Labels({1, kIgnore})).sum +
                           ops::CrossEntropyLoss(logits.Slice(2, 4), Labels({0, 2})).sum;
  EXPECT_NEAR(micro_sum / whole.count, whole.sum / whole.count, 1e-12);
}

TEST(LossDeathTest, CrossEntropyRejectsLabelsOutsideTheClasses) {
  const Tensor logits = TensorFrom({2, 3}, DType::kF32, RandomValues(6, 29));
  EXPECT_DEATH(ops::CrossEntropyLoss(logits, Labels({0, 3})), "outside");
  EXPECT_DEATH(ops::CrossEntropyLoss(logits, Labels({-1, 0})), "outside");
}

TEST(LossDeathTest, TargetsMustMatchTheLogits) {
  const Tensor logits = TensorFrom({2, 3}, DType::kF32, RandomValues(6, 30));
  const Tensor targets = TensorFrom({3, 2}, DType::kF32, RandomValues(6, 31));
  EXPECT_DEATH(ops::MseLoss(logits, targets), "targets must have shape");
}

}  // namespace
}  // namespace xlmr
