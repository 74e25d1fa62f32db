// sentence-transformers' MultipleNegativesRankingLoss with its defaults (cos_sim, directions
// ("query_to_doc",), partition_mode "joint"; InfoNCE with in-batch negatives): for a batch of N
// rows (anchor, positive, hard negatives...), anchor i's candidates are every positive and every
// hard negative of the batch, and its loss term is the cross-entropy of
//   scores[i, j] = scale * cos(anchor_i, candidate_j)
// against candidate i (its own positive). sentence-transformers returns the mean over the N
// anchors; here, as every objective of framework/train/objective.h, the sum and its N terms.
//
// The embeddings come column by column: rows [0, N) the anchors, [N, 2N) the positives, then
// each hard-negative column's N rows; the candidates are rows [N, C*N), in sentence-transformers'
// order (torch.cat of the positives and the negative columns). `targets` are the cross-entropy's
// labels 0..N-1 on the embeddings' device: the batch's labels (data::Collate gives them).
//
// Symmetric (Directions::kSymmetric; MultipleNegativesRankingLoss with directions
// ("query_to_doc", "doc_to_query") and partition_mode "per_direction", which the deprecated
// MultipleNegativesSymmetricRankingLoss is): each row adds a second term, the cross-entropy of
//   scores_back[i, j] = scale * cos(positive_i, anchor_j)
// against anchor i (every anchor of the batch the candidates, hard negatives taking no part);
// sentence-transformers averages the two terms of a row, then the rows: here the sum over the 2N
// terms and their count 2N, whose mean is the same.
//
// Computed as sentence-transformers computes it, in fp32, from ops: both sides normalised
// (ops::NormalizeRows; the scale rides on the anchors' side), their product (ops::Linear),
// cross-entropy (ops::CrossEntropyLoss). Its rounding differs from torch's in the last bits
// (scale applied before the product; other summation orders).
#ifndef XLMR_FRAMEWORK_TRAIN_IN_BATCH_NEGATIVES_H_
#define XLMR_FRAMEWORK_TRAIN_IN_BATCH_NEGATIVES_H_

#include <cstdint>

#include "framework/ops/loss.h"
#include "framework/tensor/tensor.h"

namespace xlmr::train {

// sentence-transformers' default scale (the inverse temperature, 1 / 0.05).
inline constexpr float kDefaultSimilarityScale = 20.0f;

// Which similarity directions the loss takes (sentence-transformers' `directions`).
enum class Directions {
  kQueryToDoc,  // anchors against the candidates (the default)
  kSymmetric,   // and each positive against the anchors
};

// [in] embeddings [C*N, H] f32, C >= 2 columns; targets [N] i32 = 0..N-1 on its device; scale > 0.
// Returns the sum over the terms and their count (N, or 2N when symmetric).
ops::LossSum InBatchNegativesLoss(const Tensor& embeddings, const Tensor& targets, float scale,
                                  Directions directions = Directions::kQueryToDoc);

// totals[element] += InBatchNegativesLoss(...).sum on the embeddings' device, without waiting
// (training: the step state's loss sum; ops::AccumulateCrossEntropyLoss).
void AccumulateInBatchNegativesLoss(const Tensor& embeddings, const Tensor& targets, float scale,
                                    Tensor& totals, int64_t element,
                                    Directions directions = Directions::kQueryToDoc);

// d(loss sum)/d(embeddings) * gradient_scale, [C*N, H] f32 (new, kActivations).
Tensor InBatchNegativesBackward(const Tensor& embeddings, const Tensor& targets, float scale,
                                ops::GradientScale gradient_scale,
                                Directions directions = Directions::kQueryToDoc);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_IN_BATCH_NEGATIVES_H_
