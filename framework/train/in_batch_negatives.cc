#include "framework/train/in_batch_negatives.h"

#include "framework/core/check.h"
#include "framework/ops/linear.h"
#include "framework/ops/row_normalize.h"

namespace xlmr::train {
namespace {

// The forward's pieces the loss and the backward both need.
struct Similarities {
  Tensor anchors;          // [N, H] rows of the embeddings
  Tensor candidates;       // [(C-1)N, H]
  Tensor scaled_anchors;   // scale * anchors / |anchors|
  Tensor unit_candidates;  // candidates / |candidates|
  Tensor scores;           // [N, (C-1)N] f32
};

Similarities Score(const Tensor& embeddings, const Tensor& targets, float scale) {
  XLMR_CHECK(embeddings.defined() && embeddings.dtype() == DType::kF32 && embeddings.rank() == 2)
      << "in-batch negatives: embeddings must be [C*N, H] f32";
  XLMR_CHECK(targets.defined() && targets.dtype() == DType::kI32 && targets.rank() == 1)
      << "in-batch negatives: targets must be [N] i32";
  const int64_t anchors = targets.numel(), rows = embeddings.dim(0);
  XLMR_CHECK(anchors > 0 && rows % anchors == 0 && rows / anchors >= 2)
      << "in-batch negatives: " << rows << " embeddings for " << anchors
      << " anchors: need an anchor and a positive per row, and whole hard-negative columns";
  XLMR_CHECK(scale > 0.0f) << "in-batch negatives: scale " << scale;
  Similarities s;
  s.anchors = embeddings.Slice(0, anchors);
  s.candidates = embeddings.Slice(anchors, rows);
  s.scaled_anchors = ops::NormalizeRows(s.anchors, scale);
  s.unit_candidates = ops::NormalizeRows(s.candidates);
  s.scores = ops::Linear(s.scaled_anchors, s.unit_candidates, Tensor(), DType::kF32);
  return s;
}

}  // namespace

ops::LossSum InBatchNegativesLoss(const Tensor& embeddings, const Tensor& targets, float scale) {
  return ops::CrossEntropyLoss(Score(embeddings, targets, scale).scores, targets);
}

void AccumulateInBatchNegativesLoss(const Tensor& embeddings, const Tensor& targets, float scale,
                                    Tensor& totals, int64_t element) {
  ops::AccumulateCrossEntropyLoss(Score(embeddings, targets, scale).scores, targets, 0.0f, totals,
                                  element);
}

Tensor InBatchNegativesBackward(const Tensor& embeddings, const Tensor& targets, float scale,
                                ops::GradientScale gradient_scale) {
  const Similarities s = Score(embeddings, targets, scale);
  const Tensor d_scores = ops::CrossEntropyBackward(s.scores, targets, gradient_scale);
  const Device device = embeddings.device();
  Tensor d_unit_candidates = Tensor::Zeros(s.unit_candidates.shape(), DType::kF32, device);
  const Tensor d_scaled_anchors = ops::LinearBackward(d_scores, s.scaled_anchors, s.unit_candidates,
                                                      &d_unit_candidates, nullptr, DType::kF32);
  // Both halves' gradients land in one tensor, rows as the embeddings'.
  Tensor d_embeddings = Tensor::Empty(embeddings.shape(), DType::kF32, device, MemoryCategory::kActivations);
  Tensor d_anchors = d_embeddings.Slice(0, s.anchors.dim(0));
  Tensor d_candidates = d_embeddings.Slice(s.anchors.dim(0), embeddings.dim(0));
  ops::NormalizeRowsBackward(d_scaled_anchors, s.anchors, scale, &d_anchors);
  ops::NormalizeRowsBackward(d_unit_candidates, s.candidates, 1.0f, &d_candidates);
  return d_embeddings;
}

}  // namespace xlmr::train
