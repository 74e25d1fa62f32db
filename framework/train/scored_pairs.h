// sentence-transformers' CoSENTLoss with its defaults (util.pairwise_cos_sim, scale 20) over
// scored pairs: for a batch of N rows (sentence1, sentence2, score),
//   s_i  = scale * cos(first_i, second_i)
//   loss = log(1 + sum over (i, j) with score_i < score_j of exp(s_i - s_j))
// one value for the batch (ops::CosentLoss: {loss, 1}), which sentence-transformers returns as
// it is. Accumulated, a step's loss is the mean over its micro-batches (and ranks), as the
// Trainer divides each micro-batch's loss by the accumulation steps.
//
// The embeddings come column by column: rows [0, N) the first texts, [N, 2N) the second
// (data::CollateRows); `scores` are the rows' scores [N] f32 on the embeddings' device.
// Computed from ops: both sides normalised (ops::NormalizeRows; the scale rides on the first
// side), their row-wise products (ops::RowDots), CoSENT (ops::CosentLoss, in double). The
// rounding differs from torch's in the last bits (scale applied before the product).
#ifndef XLMR_FRAMEWORK_TRAIN_SCORED_PAIRS_H_
#define XLMR_FRAMEWORK_TRAIN_SCORED_PAIRS_H_

#include <cstdint>

#include "framework/ops/loss.h"
#include "framework/tensor/tensor.h"

namespace xlmr::train {

// [in] embeddings [2N, H] f32; scores [N] f32 on its device; scale > 0.
ops::LossSum ScoredPairsLoss(const Tensor& embeddings, const Tensor& scores, float scale);

// totals[element] += ScoredPairsLoss(...).sum on the embeddings' device, without waiting.
void AccumulateScoredPairsLoss(const Tensor& embeddings, const Tensor& scores, float scale, Tensor& totals,
                               int64_t element);

// d(loss)/d(embeddings) * gradient_scale, [2N, H] f32 (new, kActivations).
Tensor ScoredPairsBackward(const Tensor& embeddings, const Tensor& scores, float scale,
                           ops::GradientScale gradient_scale);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_SCORED_PAIRS_H_
