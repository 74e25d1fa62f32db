// ops::CosentLoss, AccumulateCosentLoss and CosentBackward (framework/ops/loss.h) on the CPU:
// the loss against the textbook formula in long double with the pairs enumerated directly, ties,
// no and one score, score gaps of 2000 (stability), the gradient against central finite
// differences of that long-double loss, the gradient scale as a value and read from a state, the
// accumulation, and sentence-transformers' CoSENTLoss (tests/golden/cosent, make_cosent_golden.py).
//
// Tolerances (the implementation works in double, the references in long double):
//   loss vs long double       1e-12 relative (of max(1, loss)): a double sum of the row sums, each
//                             of <= N terms with exp within an ulp, then a log: <= (2N + 4) 2^-53
//                             relative to the normaliser, 1.5e-14 for N = 64;
//   gradient vs differences   2^-23 of the entry + 1e-9 of the largest: the gradient is rounded once
//                             to float (2^-24) from a double good to ~1e-15; the long-double central
//                             differences (step 1e-5) err by ~1e-10 (truncation) and less (rounding);
//   golden, see MatchesSentenceTransformersCoSENTLoss.
// A pair counted for a tie, a missing "1 +", a flipped pair direction or sign, or a dropped
// scale move the loss or the gradient by far more (O(0.1), or log(1 + 1/P) ~ 1/P for the "1 +",
// which the cases with few or no pairs expose).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "framework/io/safetensors.h"
#include "framework/ops/loss.h"
#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using testing::RandomValues;
using testing::TensorFrom;

const char kGolden[] = "tests/golden/cosent/golden.safetensors";

Tensor Vector(const std::vector<float>& values) {
  return TensorFrom({static_cast<int64_t>(values.size())}, DType::kF32, values);
}

// log(1 + sum over (i, j) with y[i] < y[j] of exp(s[i] - s[j])), no stabilisation: long double
// holds e^2000 (its range reaches e^11356).
long double ReferenceLoss(const std::vector<long double>& s, const std::vector<float>& y) {
  long double sum = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    for (size_t j = 0; j < s.size(); ++j) {
      if (y[i] < y[j]) sum += std::exp(s[i] - s[j]);
    }
  }
  return std::log(1 + sum);
}

std::vector<long double> Widened(const std::vector<float>& values) {
  return std::vector<long double>(values.begin(), values.end());
}

// scale * d ReferenceLoss / d s by central differences in long double.
std::vector<double> FiniteDifferences(const std::vector<float>& scores, const std::vector<float>& labels,
                                      double scale) {
  const long double step = 1e-5L;
  std::vector<long double> point = Widened(scores);
  std::vector<double> gradient(scores.size());
  for (size_t k = 0; k < scores.size(); ++k) {
    point[k] = scores[k] + step;
    const long double up = ReferenceLoss(point, labels);
    point[k] = scores[k] - step;
    const long double down = ReferenceLoss(point, labels);
    point[k] = scores[k];
    gradient[k] = static_cast<double>(scale * ((up - down) / (2 * step)));
  }
  return gradient;
}

void ExpectLossNear(double got, long double expected, const std::string& what) {
  const double reference = static_cast<double>(expected);
  EXPECT_NEAR(got, reference, 1e-12 * std::max(1.0, std::fabs(reference))) << what;
}

void ExpectGradientNear(const std::vector<float>& got, const std::vector<double>& expected, const std::string& what) {
  ASSERT_EQ(got.size(), expected.size()) << what;
  double largest = 0;
  for (double e : expected) largest = std::max(largest, std::fabs(e));
  for (size_t k = 0; k < got.size(); ++k) {
    ASSERT_TRUE(std::isfinite(got[k])) << what << " score " << k;
    EXPECT_NEAR(got[k], expected[k], std::ldexp(std::fabs(expected[k]), -23) + 1e-9 * largest)
        << what << " score " << k;
  }
}

// Scores in [-20, 20] (CoSENT's scale 20 times a cosine) and labels on a grid of five values, so
// that a batch of more than five has ties.
std::vector<float> GridLabels(int64_t n, uint32_t seed) {
  std::vector<float> labels = RandomValues(n, seed, 0.0f, 1.0f);
  for (float& y : labels) y = std::floor(y * 5.0f) / 4.0f;
  return labels;
}

class CosentSizeTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(CosentSizeTest, LossAndGradientMatchTheTextbookFormula) {
  const int64_t n = GetParam();
  const std::vector<float> scores = RandomValues(n, 51 + static_cast<uint32_t>(n), -20.0f, 20.0f);
  const std::vector<float> labels = GridLabels(n, 61 + static_cast<uint32_t>(n));
  const ops::LossSum loss = ops::CosentLoss(Vector(scores), Vector(labels));
  EXPECT_EQ(loss.count, 1);
  ExpectLossNear(loss.sum, ReferenceLoss(Widened(scores), labels), "N = " + std::to_string(n));
  const float scale = 0.37f;  // stands for loss_scale / global count
  ExpectGradientNear(ops::CosentBackward(Vector(scores), Vector(labels), scale).ToFloatVector(),
                     FiniteDifferences(scores, labels, scale), "N = " + std::to_string(n));
}

INSTANTIATE_TEST_SUITE_P(Sizes, CosentSizeTest, ::testing::Values(2, 5, 17, 64));

TEST(CosentLossTest, TheOneInsideTheLogarithm) {
  // One pair at equal scores: log(1 + e^0) = log 2, gradient (1/2, -1/2).
  const ops::LossSum loss = ops::CosentLoss(Vector({3.0f, 3.0f}), Vector({0.0f, 1.0f}));
  EXPECT_NEAR(loss.sum, std::log(2.0), 1e-15);
  EXPECT_EQ(ops::CosentBackward(Vector({3.0f, 3.0f}), Vector({0.0f, 1.0f}), 1.0f).ToFloatVector(),
            (std::vector<float>{0.5f, -0.5f}));
}

TEST(CosentLossTest, TiesMakeNoPairs) {
  // All labels equal: no pair, log(1) = 0 and no gradient, whatever the scores.
  const std::vector<float> scores = {4.0f, -7.0f, 0.5f};
  const ops::LossSum none = ops::CosentLoss(Vector(scores), Vector({0.6f, 0.6f, 0.6f}));
  EXPECT_EQ(none.sum, 0.0);
  EXPECT_EQ(none.count, 1);
  EXPECT_EQ(ops::CosentBackward(Vector(scores), Vector({0.6f, 0.6f, 0.6f}), 1.0f).ToFloatVector(),
            (std::vector<float>{0.0f, 0.0f, 0.0f}));
  // Labels (0.2, 0.2, 0.7): the pairs (0, 2) and (1, 2) only, not (0, 1) nor (1, 0).
  const std::vector<float> labels = {0.2f, 0.2f, 0.7f};
  const double expected = std::log(1.0 + std::exp(4.0 - 0.5) + std::exp(-7.0 - 0.5));
  EXPECT_NEAR(ops::CosentLoss(Vector(scores), Vector(labels)).sum, expected, 1e-15 * expected);
  const double z = 1.0 + std::exp(3.5) + std::exp(-7.5);
  ExpectGradientNear(ops::CosentBackward(Vector(scores), Vector(labels), 1.0f).ToFloatVector(),
                     {std::exp(3.5) / z, std::exp(-7.5) / z, -(std::exp(3.5) + std::exp(-7.5)) / z}, "ties");
}

TEST(CosentLossTest, NoScoresAndOneScore) {
  const Tensor empty = Tensor::Zeros({0}, DType::kF32);
  const ops::LossSum none = ops::CosentLoss(empty, empty);
  EXPECT_EQ(none.sum, 0.0);
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(ops::CosentBackward(empty, empty, 1.0f).shape(), Shape({0}));
  Tensor totals = Tensor::Zeros({1}, DType::kI64);
  ops::AccumulateCosentLoss(empty, empty, totals, 0);
  EXPECT_EQ(totals.data<int64_t>()[0], 0);  // untouched: all-zero bits

  const ops::LossSum one = ops::CosentLoss(Vector({5.0f}), Vector({0.3f}));
  EXPECT_EQ(one.sum, 0.0);  // no pair: log(1)
  EXPECT_EQ(one.count, 1);
  EXPECT_EQ(ops::CosentBackward(Vector({5.0f}), Vector({0.3f}), 1.0f).ToFloatVector(), (std::vector<float>{0.0f}));
}

TEST(CosentLossTest, ScoreGapsOfTwoThousandStayFinite) {
  // Pairs gaining 2000 (s[i] - s[j] for y[i] < y[j]), losing 2000, and the ones between: exp(2000)
  // overflows a double, exp(-2000) underflows it.
  const std::vector<float> scores = {1000.0f, -1000.0f, 0.0f, 999.5f, -999.0f};
  const std::vector<float> labels = {0.0f, 1.0f, 0.5f, 0.0f, 0.25f};
  const ops::LossSum loss = ops::CosentLoss(Vector(scores), Vector(labels));
  ASSERT_TRUE(std::isfinite(loss.sum));
  ExpectLossNear(loss.sum, ReferenceLoss(Widened(scores), labels), "gaps of 2000");
  ExpectGradientNear(ops::CosentBackward(Vector(scores), Vector(labels), 1.0f).ToFloatVector(),
                     FiniteDifferences(scores, labels, 1.0), "gaps of 2000");

  // Every pair ordered right by 2000: the loss is log(1 + e^-2000) ~ 1e-869, 0 in double.
  const ops::LossSum right = ops::CosentLoss(Vector({-1000.0f, 1000.0f}), Vector({0.0f, 1.0f}));
  EXPECT_EQ(right.sum, 0.0);
  const std::vector<float> d = ops::CosentBackward(Vector({-1000.0f, 1000.0f}), Vector({0.0f, 1.0f}), 1.0f).ToFloatVector();
  EXPECT_EQ(d, (std::vector<float>{0.0f, 0.0f}));
  // Every pair ordered wrong by 2000: loss 2000 + log(1 + e^-2000) = 2000, gradient (1, -1).
  EXPECT_EQ(ops::CosentLoss(Vector({1000.0f, -1000.0f}), Vector({0.0f, 1.0f})).sum, 2000.0);
  EXPECT_EQ(ops::CosentBackward(Vector({1000.0f, -1000.0f}), Vector({0.0f, 1.0f}), 1.0f).ToFloatVector(),
            (std::vector<float>{1.0f, -1.0f}));
}

TEST(CosentLossTest, TinyLossKeepsItsValue) {
  // log(1 + P) for P = e^-50 ~ 2e-22: log1p keeps it, log(1 + P) would give 0.
  const ops::LossSum loss = ops::CosentLoss(Vector({-25.0f, 25.0f}), Vector({0.0f, 1.0f}));
  EXPECT_NEAR(loss.sum, std::exp(-50.0), 1e-12 * std::exp(-50.0));
}

TEST(CosentLossTest, GradientScaleIsAValueOrReadFromTheState) {
  const std::vector<float> scores = RandomValues(9, 71, -20.0f, 20.0f);
  const Tensor s = Vector(scores), y = Vector(GridLabels(9, 72));
  const std::vector<float> unscaled = ops::CosentBackward(s, y, 1.0f).ToFloatVector();
  // A power of two scales exactly, before and after the rounding to float.
  const std::vector<float> quarter = ops::CosentBackward(s, y, 0.25f).ToFloatVector();
  for (size_t k = 0; k < scores.size(); ++k) EXPECT_EQ(quarter[k], 0.25f * unscaled[k]) << k;
  // The state's double (holding a float's value) gives the bits of the same value given directly.
  Tensor state = Tensor::Zeros({3}, DType::kI64);
  const double stored = 0.37f;
  std::memcpy(state.data<int64_t>() + 1, &stored, sizeof stored);
  EXPECT_EQ(ops::CosentBackward(s, y, ops::GradientScale::InState(state, 1)).ToFloatVector(),
            ops::CosentBackward(s, y, 0.37f).ToFloatVector());
}

TEST(CosentLossTest, AccumulateAddsTheLossBits) {
  const Tensor s = Vector(RandomValues(12, 73, -20.0f, 20.0f)), y = Vector(GridLabels(12, 74));
  const double loss = ops::CosentLoss(s, y).sum;
  Tensor totals = Tensor::Zeros({2}, DType::kI64);
  double* total = reinterpret_cast<double*>(totals.data<int64_t>()) + 1;
  *total = 1.5;
  ops::AccumulateCosentLoss(s, y, totals, 1);
  EXPECT_EQ(*total, 1.5 + loss);
  ops::AccumulateCosentLoss(s, y, totals, 1);
  EXPECT_EQ(*total, 1.5 + loss + loss);
}

// A float64 scalar or vector of the golden file (ToTensor reads float ones only).
std::vector<double> GoldenDoubles(const io::SafetensorsFile& file, const std::string& name) {
  const io::SafetensorsTensor* t = file.Find(name);
  EXPECT_TRUE(t != nullptr && t->dtype == "F64") << name;
  if (t == nullptr || t->dtype != "F64") return {};
  std::vector<double> values(t->bytes.size() / sizeof(double));
  std::memcpy(values.data(), t->bytes.data(), values.size() * sizeof(double));
  return values;
}

std::vector<float> GoldenFloats(const io::SafetensorsFile& file, const std::string& name) {
  absl::StatusOr<Tensor> t = io::ToTensor(file, name);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t->ToFloatVector() : std::vector<float>();
}

// sentence-transformers' CoSENTLoss (scale 20, 16 pairs, tied labels) on the scores it computed:
//   - in float64 on the same scores (its sorted-labels, logcumsumexp algorithm without float32's
//     rounding): loss 1e-12 relative, as against long double above; gradient 2^-24 of the entry
//     (our one rounding to float) + 1e-12 of the largest (the two double computations);
//   - in float32, as training runs it: its logsumexp works on terms up to 2 max|s| (40) in size,
//     each rounded by 2^-24 of that, and the loss itself rounds by 2^-24 of 14: bound
//     4 * 2^-24 * (2 max|s| + |loss|), 1.1e-5 (measured 2.6e-7); its gradient is good to a few
//     float ulps of the largest entry (measured 1.2e-7 against float64): bound 1e-6 of it.
TEST(CosentLossTest, MatchesSentenceTransformersCoSENTLoss) {
  absl::StatusOr<io::SafetensorsFile> file = io::ReadSafetensors(kGolden);
  ASSERT_TRUE(file.ok()) << file.status();
  const std::vector<float> scores = GoldenFloats(*file, "scores");
  const Tensor s = Vector(scores), y = Vector(GoldenFloats(*file, "labels"));
  const ops::LossSum loss = ops::CosentLoss(s, y);
  EXPECT_EQ(loss.count, 1);
  const std::vector<double> loss_f64 = GoldenDoubles(*file, "loss_f64");
  ASSERT_EQ(loss_f64.size(), 1u);
  EXPECT_NEAR(loss.sum, loss_f64[0], 1e-12 * std::fabs(loss_f64[0]));
  double largest_score = 0;
  for (float v : scores) largest_score = std::max(largest_score, std::fabs(static_cast<double>(v)));
  const double loss_f32 = GoldenFloats(*file, "loss")[0];
  EXPECT_NEAR(loss.sum, loss_f32, 4 * std::ldexp(1.0, -24) * (2 * largest_score + std::fabs(loss_f32)));

  const std::vector<float> d = ops::CosentBackward(s, y, 1.0f).ToFloatVector();
  const std::vector<double> d_f64 = GoldenDoubles(*file, "d_scores_f64");
  const std::vector<float> d_f32 = GoldenFloats(*file, "d_scores");
  ASSERT_EQ(d.size(), d_f64.size());
  ASSERT_EQ(d.size(), d_f32.size());
  double largest = 0, worst_f32 = 0;
  for (double v : d_f64) largest = std::max(largest, std::fabs(v));
  for (size_t k = 0; k < d.size(); ++k) {
    EXPECT_NEAR(d[k], d_f64[k], std::ldexp(std::fabs(d_f64[k]), -24) + 1e-12 * largest) << "score " << k;
    EXPECT_NEAR(d[k], d_f32[k], 1e-6 * largest) << "score " << k;
    worst_f32 = std::max(worst_f32, std::fabs(static_cast<double>(d[k]) - d_f32[k]));
  }
  std::printf("measured CoSENT: loss %.3g (f64), %.3g (f32); gradient %.3g of the largest (f32)\n",
              std::fabs(loss.sum - loss_f64[0]), std::fabs(loss.sum - loss_f32), worst_f32 / largest);
}

TEST(CosentLossDeathTest, ScoresAndLabelsAreFloatVectorsOfOneLength) {
  const Tensor s = Vector({1.0f, 2.0f});
  EXPECT_DEATH(ops::CosentLoss(s, Vector({1.0f, 2.0f, 3.0f})), "labels must have shape");
  EXPECT_DEATH(ops::CosentLoss(s, Tensor::Zeros({2}, DType::kI32)), "labels must be f32");
  EXPECT_DEATH(ops::CosentBackward(TensorFrom({2, 1}, DType::kF32, {1.0f, 2.0f}), s, 1.0f), "scores must be");
}

}  // namespace
}  // namespace xlmr
