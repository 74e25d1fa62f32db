#include "framework/train/scored_pairs.h"

#include "framework/core/check.h"
#include "framework/ops/row_dot.h"
#include "framework/ops/row_normalize.h"

namespace xlmr::train {
namespace {

// The forward's pieces the loss and the backward both need.
struct PairScores {
  Tensor first;         // [N, H] rows of the embeddings
  Tensor second;        // [N, H]
  Tensor scaled_first;  // scale * first / |first|
  Tensor unit_second;   // second / |second|
  Tensor scores;        // [N] f32: scale * cos(first_i, second_i)
};

PairScores Score(const Tensor& embeddings, const Tensor& labels, float scale) {
  XLMR_CHECK(embeddings.defined() && embeddings.dtype() == DType::kF32 && embeddings.rank() == 2)
      << "scored pairs: embeddings must be [2N, H] f32";
  XLMR_CHECK(labels.defined() && labels.dtype() == DType::kF32 && labels.rank() == 1)
      << "scored pairs: scores must be [N] f32";
  const int64_t pairs = labels.numel();
  XLMR_CHECK(embeddings.dim(0) == 2 * pairs)
      << "scored pairs: " << embeddings.dim(0) << " embeddings for " << pairs << " pairs";
  XLMR_CHECK(scale > 0.0f) << "scored pairs: scale " << scale;
  PairScores s;
  s.first = embeddings.Slice(0, pairs);
  s.second = embeddings.Slice(pairs, 2 * pairs);
  s.scaled_first = ops::NormalizeRows(s.first, scale);
  s.unit_second = ops::NormalizeRows(s.second);
  s.scores = ops::RowDots(s.scaled_first, s.unit_second);
  return s;
}

}  // namespace

ops::LossSum ScoredPairsLoss(const Tensor& embeddings, const Tensor& scores, float scale) {
  return ops::CosentLoss(Score(embeddings, scores, scale).scores, scores);
}

void AccumulateScoredPairsLoss(const Tensor& embeddings, const Tensor& scores, float scale, Tensor& totals,
                               int64_t element) {
  ops::AccumulateCosentLoss(Score(embeddings, scores, scale).scores, scores, totals, element);
}

Tensor ScoredPairsBackward(const Tensor& embeddings, const Tensor& scores, float scale,
                           ops::GradientScale gradient_scale) {
  const PairScores s = Score(embeddings, scores, scale);
  const Tensor d_scores = ops::CosentBackward(s.scores, scores, gradient_scale);
  const Device device = embeddings.device();
  Tensor d_scaled_first = Tensor::Empty(s.first.shape(), DType::kF32, device, MemoryCategory::kActivations);
  Tensor d_unit_second = Tensor::Empty(s.second.shape(), DType::kF32, device, MemoryCategory::kActivations);
  ops::RowDotsBackward(d_scores, s.scaled_first, s.unit_second, &d_scaled_first, &d_unit_second);
  // Both halves' gradients land in one tensor, rows as the embeddings'.
  Tensor d_embeddings = Tensor::Empty(embeddings.shape(), DType::kF32, device, MemoryCategory::kActivations);
  Tensor d_first = d_embeddings.Slice(0, s.first.dim(0));
  Tensor d_second = d_embeddings.Slice(s.first.dim(0), embeddings.dim(0));
  ops::NormalizeRowsBackward(d_scaled_first, s.first, scale, &d_first);
  ops::NormalizeRowsBackward(d_unit_second, s.second, 1.0f, &d_second);
  return d_embeddings;
}

}  // namespace xlmr::train
