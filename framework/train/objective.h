// What a training run minimises, per task, as Hugging Face's heads compute their loss:
//   kSingleLabel  cross-entropy of logits [B, L] against label ids [B]
//                 (XLMRobertaForSequenceClassification, single_label_classification);
//   kPerToken     cross-entropy of logits [B, S, L] against label ids [B, S], -100 ignored
//                 (XLMRobertaForTokenClassification: only each word's first sub-token counts);
//   kRegression   mean squared error of predictions [B, 1] against targets [B] f32
//                 (problem_type "regression");
//   kSpanStartEnd cross-entropy of start logits [B, S] against start positions [B] and of end
//                 logits against end positions, the logits given as [2, B, S] (starts, then
//                 ends) and the positions as [2, B] i32, -100 ignored
//                 (XLMRobertaForQuestionAnswering: (start loss + end loss) / 2, i.e. the mean
//                 over the 2B terms when none is ignored). HF clamps positions to [0, S] and
//                 ignores S; our features never hold a position outside the window, so the
//                 caller passes -100 for one it wants ignored. With some ignored, HF averages
//                 the start and end terms separately and then the two means; this averages
//                 all kept terms at once (equal when both halves keep as many).
//   kInBatchNegatives sentence-transformers' MultipleNegativesRankingLoss over sentence
//                 embeddings [C*N, H] f32 (column by column: N anchors, N positives, hard
//                 negatives), labels [N] i32 = 0..N-1: one term per anchor
//                 (framework/train/in_batch_negatives.h; `similarity_scale`, default 20).
//   kSymmetricInBatchNegatives the same rows and labels, with each positive also scored against
//                 the anchors: two terms per anchor (Directions::kSymmetric).
//   kScoredPairs  sentence-transformers' CoSENTLoss over sentence embeddings [2N, H] f32 (N
//                 first texts, N second texts), labels [N] f32 = the pairs' scores: one term
//                 per micro-batch (framework/train/scored_pairs.h; `similarity_scale`).
//   kBinaryLogits binary cross-entropy with logits of predictions [B, 1] against targets [B] f32
//                 in [0, 1] (sentence-transformers' CrossEncoder with BinaryCrossEntropyLoss:
//                 torch's BCEWithLogitsLoss, the mean over the batch).
//
// The loss is returned as a sum and its term count (ops::LossSum): TrainStep divides by the
// term count of the whole global batch (examples, labelled tokens for kPerToken, start and
// end positions for kSpanStartEnd), so that
// accumulated, all-reduced gradients are those of the mean over the global batch. For
// kPerToken that is the mean over every labelled token of the global batch, as HF's Trainer
// computes it with num_items_in_batch (since transformers 4.46; average_tokens_across_devices).
#ifndef XLMR_FRAMEWORK_TRAIN_OBJECTIVE_H_
#define XLMR_FRAMEWORK_TRAIN_OBJECTIVE_H_

#include "framework/ops/loss.h"
#include "framework/tensor/tensor.h"
#include "framework/train/in_batch_negatives.h"
#include "framework/train/scored_pairs.h"

namespace xlmr::train {

enum class Objective {
  kSingleLabel,
  kPerToken,
  kRegression,
  kSpanStartEnd,
  kInBatchNegatives,
  kSymmetricInBatchNegatives,
  kScoredPairs,
  kBinaryLogits
};

// The loss sum and term count of a micro-batch (labels as data::Collate builds them).
// label_smoothing (--label_smoothing_factor, in [0, 1]) mixes each classification term with
// the uniform target as HF's LabelSmoother does (ops::CrossEntropyLoss); ignored tokens take
// no part, and the term count stays that of the labelled rows, so the global normalisation
// above holds unchanged. kRegression takes none (0; the flags refuse it).
// similarity_scale: the sentence-embedding objectives' scale (> 0); the others ignore it.
// Whether `objective` is in-batch negatives (either direction set), and which directions.
bool IsInBatchNegatives(Objective objective);
Directions InBatchDirections(Objective objective);

ops::LossSum ObjectiveLoss(Objective objective, const Tensor& logits, const Tensor& labels,
                           float label_smoothing = 0.0f, float similarity_scale = kDefaultSimilarityScale);
// totals[element] += ObjectiveLoss(...).sum on the logits' device, without waiting (training:
// the step state's loss sum; ops::AccumulateCrossEntropyLoss).
void AccumulateObjectiveLoss(Objective objective, const Tensor& logits, const Tensor& labels,
                             float label_smoothing, Tensor& totals, int64_t element,
                             float similarity_scale = kDefaultSimilarityScale);

// d(loss sum)/d(logits) * scale, f32, shaped as `logits`. scale = loss_scale / global terms
// (training: read from the step state when the backward runs).
Tensor ObjectiveBackward(Objective objective, const Tensor& logits, const Tensor& labels,
                         ops::GradientScale scale, float label_smoothing = 0.0f,
                         float similarity_scale = kDefaultSimilarityScale);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_OBJECTIVE_H_
