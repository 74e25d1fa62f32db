// Accuracy, macro F1 and ROC AUC against values worked out by hand (each case's arithmetic is
// in its comment), including the corner cases where sklearn's rules decide: a class that is
// only predicted, a class never predicted correctly, tied scores, one class present.
// Tolerance: 1e-15 absolute (a few double roundings of exact small fractions), so a metric off
// by one example in a hundred, or one tie counted as a win, fails.
#include "framework/train/classification_metrics.h"

#include "gtest/gtest.h"

namespace xlmr::train {
namespace {

constexpr double kExact = 1e-15;

TEST(ClassificationMetricsTest, AccuracyIsTheFractionCorrect) {
  // 3 of 4 equal.
  EXPECT_NEAR(Accuracy({0, 1, 2, 1}, {0, 1, 1, 1}), 0.75, kExact);
  EXPECT_EQ(Accuracy({}, {}), 0.0);
}

TEST(ClassificationMetricsTest, MacroF1AveragesPerClassF1) {
  // labels      0 0 1 1 2
  // predictions 0 1 1 1 0
  // class 0: TP 1, FP 1 (the last), FN 1 (the second) -> 2/(2+1+1) = 1/2
  // class 1: TP 2, FP 1, FN 0 -> 4/5
  // class 2: TP 0, FN 1 -> 0
  // mean (1/2 + 4/5 + 0) / 3 = 13/30. (Micro F1, accuracy, would be 3/5; a mean weighted by
  // support (2*1/2 + 2*4/5 + 0)/5 = 13/25.)
  EXPECT_NEAR(MacroF1({0, 0, 1, 1, 2}, {0, 1, 1, 1, 0}), 13.0 / 30.0, kExact);
}

TEST(ClassificationMetricsTest, MacroF1CountsClassesThatAreOnlyPredicted) {
  // labels {0, 1}, predictions add class 2 (sklearn's label set is the union):
  // class 0: TP 1 -> 2/2 = 1; class 1: TP 0, FN 1 -> 0; class 2: FP 1 -> 0. Mean 1/3 (over the
  // labels' classes alone it would be 1/2).
  EXPECT_NEAR(MacroF1({0, 1}, {0, 2}), 1.0 / 3.0, kExact);
  // Every prediction right: 1.
  EXPECT_NEAR(MacroF1({3, 1, 3}, {3, 1, 3}), 1.0, kExact);
}

TEST(ClassificationMetricsTest, RocAucIsTheProbabilityAPositiveOutranksANegative) {
  // positives score 0.9, 0.4; negatives 0.5, 0.1. Pairs won: (0.9 > 0.5), (0.9 > 0.1),
  // (0.4 > 0.1); lost (0.4 < 0.5): 3/4.
  EXPECT_NEAR(*RocAuc({1, 0, 1, 0}, {0.9, 0.5, 0.4, 0.1}), 0.75, kExact);
  // A tie between a positive and a negative counts one half: positive 0.3, negatives 0.3, 0.2:
  // (0.5 + 1) / 2 = 3/4.
  EXPECT_NEAR(*RocAuc({1, 0, 0}, {0.3, 0.3, 0.2}), 0.75, kExact);
  // Perfectly reversed: 0.
  EXPECT_NEAR(*RocAuc({0, 1}, {0.9, 0.1}), 0.0, kExact);
}

TEST(ClassificationMetricsTest, RocAucIsUndefinedWithOneClass) {
  EXPECT_FALSE(RocAuc({1, 1}, {0.2, 0.7}).has_value());
  EXPECT_FALSE(RocAuc({0, 0, 0}, {0.2, 0.7, 0.1}).has_value());
}

}  // namespace
}  // namespace xlmr::train
