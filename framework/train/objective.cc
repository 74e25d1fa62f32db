#include "framework/train/objective.h"

#include "framework/core/check.h"

namespace xlmr::train {
namespace {

// The loss ops take rows: per-token logits [B,S,L] and labels [B,S] become B*S rows (packed
// ones, [T,L] and [T], already are rows: the same terms without the ignored padding), and a
// regression's targets [B] become the column [B,1] its predictions have.
struct Rows {
  Tensor logits;
  Tensor labels;
};

Rows AsRows(Objective objective, const Tensor& logits, const Tensor& labels, float label_smoothing) {
  XLMR_CHECK((objective != Objective::kRegression && objective != Objective::kBinaryLogits) ||
             label_smoothing == 0.0f)
      << "label smoothing needs classes; regression and binary scores have none";
  switch (objective) {
    case Objective::kSingleLabel:
      return {logits, labels};
    case Objective::kPerToken:
      if (logits.rank() == 2 && labels.rank() == 1) return {logits, labels};  // packed
      XLMR_CHECK(logits.rank() == 3 && labels.rank() == 2) << "per-token loss shapes";
      return {logits.Reshaped({logits.dim(0) * logits.dim(1), logits.dim(2)}),
              labels.Reshaped({labels.dim(0) * labels.dim(1)})};
    case Objective::kRegression:
    case Objective::kBinaryLogits:
      XLMR_CHECK(logits.rank() == 2 && logits.dim(1) == 1) << "regression and binary scores predict one value";
      return {logits, labels.Reshaped({labels.dim(0), 1})};
    case Objective::kInBatchNegatives:
    case Objective::kSymmetricInBatchNegatives:
    case Objective::kScoredPairs:
      break;  // never rows: the callers above take them first
    case Objective::kSpanStartEnd:
      XLMR_CHECK(logits.rank() == 3 && logits.dim(0) == 2 && labels.rank() == 2 &&
                 labels.dim(0) == 2 && labels.dim(1) == logits.dim(1))
          << "span loss shapes: logits [2,B,S], positions [2,B]";
      return {logits.Reshaped({2 * logits.dim(1), logits.dim(2)}),
              labels.Reshaped({2 * labels.dim(1)})};
  }
  return {};
}

}  // namespace

bool IsInBatchNegatives(Objective objective) {
  return objective == Objective::kInBatchNegatives || objective == Objective::kSymmetricInBatchNegatives;
}

Directions InBatchDirections(Objective objective) {
  return objective == Objective::kSymmetricInBatchNegatives ? Directions::kSymmetric : Directions::kQueryToDoc;
}

ops::LossSum ObjectiveLoss(Objective objective, const Tensor& logits, const Tensor& labels,
                           float label_smoothing, float similarity_scale) {
  if (IsInBatchNegatives(objective)) {
    return InBatchNegativesLoss(logits, labels, similarity_scale, InBatchDirections(objective));
  }
  if (objective == Objective::kScoredPairs) return ScoredPairsLoss(logits, labels, similarity_scale);
  const Rows rows = AsRows(objective, logits, labels, label_smoothing);
  if (objective == Objective::kBinaryLogits) return ops::BceWithLogitsLoss(rows.logits, rows.labels);
  return objective == Objective::kRegression
             ? ops::MseLoss(rows.logits, rows.labels)
             : ops::CrossEntropyLoss(rows.logits, rows.labels, label_smoothing);
}

void AccumulateObjectiveLoss(Objective objective, const Tensor& logits, const Tensor& labels,
                             float label_smoothing, Tensor& totals, int64_t element, float similarity_scale) {
  if (IsInBatchNegatives(objective)) {
    AccumulateInBatchNegativesLoss(logits, labels, similarity_scale, totals, element, InBatchDirections(objective));
    return;
  }
  if (objective == Objective::kScoredPairs) {
    AccumulateScoredPairsLoss(logits, labels, similarity_scale, totals, element);
    return;
  }
  const Rows rows = AsRows(objective, logits, labels, label_smoothing);
  if (objective == Objective::kBinaryLogits) {
    ops::AccumulateBceWithLogitsLoss(rows.logits, rows.labels, totals, element);
  } else if (objective == Objective::kRegression) {
    ops::AccumulateMseLoss(rows.logits, rows.labels, totals, element);
  } else {
    ops::AccumulateCrossEntropyLoss(rows.logits, rows.labels, label_smoothing, totals, element);
  }
}

Tensor ObjectiveBackward(Objective objective, const Tensor& logits, const Tensor& labels,
                         ops::GradientScale scale, float label_smoothing, float similarity_scale) {
  if (IsInBatchNegatives(objective)) {
    return InBatchNegativesBackward(logits, labels, similarity_scale, scale, InBatchDirections(objective));
  }
  if (objective == Objective::kScoredPairs) return ScoredPairsBackward(logits, labels, similarity_scale, scale);
  const Rows rows = AsRows(objective, logits, labels, label_smoothing);
  const Tensor d_rows =
      objective == Objective::kBinaryLogits ? ops::BceWithLogitsBackward(rows.logits, rows.labels, scale)
      : objective == Objective::kRegression ? ops::MseBackward(rows.logits, rows.labels, scale)
                                            : ops::CrossEntropyBackward(rows.logits, rows.labels, scale, label_smoothing);
  return d_rows.Reshaped(logits.shape());
}

}  // namespace xlmr::train
