#include "framework/train/in_batch_negatives.h"

#include "framework/core/check.h"
#include "framework/ops/elementwise.h"
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
  // Symmetric only: the positives (the first N candidates) against the anchors.
  Tensor scaled_positives;  // scale * positives / |positives|
  Tensor unit_anchors;      // anchors / |anchors|
  Tensor back_scores;       // [N, N] f32: scale * cos(positive_i, anchor_j)
};

Similarities Score(const Tensor& embeddings, const Tensor& targets, float scale, Directions directions) {
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
  if (directions == Directions::kSymmetric) {
    s.scaled_positives = ops::NormalizeRows(s.candidates.Slice(0, anchors), scale);
    s.unit_anchors = ops::NormalizeRows(s.anchors);
    s.back_scores = ops::Linear(s.scaled_positives, s.unit_anchors, Tensor(), DType::kF32);
  }
  return s;
}

// dx of two normalisations of the same rows x, with multipliers `scale` and 1, into `out`.
void TwoNormalizationsBackward(const Tensor& d_scaled, const Tensor& d_unit, const Tensor& x, float scale,
                               Tensor* out) {
  Tensor from_scaled = Tensor::Empty(x.shape(), DType::kF32, x.device(), MemoryCategory::kActivations);
  Tensor from_unit = Tensor::Empty(x.shape(), DType::kF32, x.device(), MemoryCategory::kActivations);
  ops::NormalizeRowsBackward(d_scaled, x, scale, &from_scaled);
  ops::NormalizeRowsBackward(d_unit, x, 1.0f, &from_unit);
  ops::CastInto(ops::Add(from_scaled, from_unit, DType::kF32), out);
}

}  // namespace

ops::LossSum InBatchNegativesLoss(const Tensor& embeddings, const Tensor& targets, float scale,
                                  Directions directions) {
  const Similarities s = Score(embeddings, targets, scale, directions);
  ops::LossSum loss = ops::CrossEntropyLoss(s.scores, targets);
  if (directions == Directions::kSymmetric) {
    const ops::LossSum back = ops::CrossEntropyLoss(s.back_scores, targets);
    loss.sum += back.sum;
    loss.count += back.count;
  }
  return loss;
}

void AccumulateInBatchNegativesLoss(const Tensor& embeddings, const Tensor& targets, float scale,
                                    Tensor& totals, int64_t element, Directions directions) {
  const Similarities s = Score(embeddings, targets, scale, directions);
  ops::AccumulateCrossEntropyLoss(s.scores, targets, 0.0f, totals, element);
  if (directions == Directions::kSymmetric) {
    ops::AccumulateCrossEntropyLoss(s.back_scores, targets, 0.0f, totals, element);
  }
}

Tensor InBatchNegativesBackward(const Tensor& embeddings, const Tensor& targets, float scale,
                                ops::GradientScale gradient_scale, Directions directions) {
  const Similarities s = Score(embeddings, targets, scale, directions);
  const Tensor d_scores = ops::CrossEntropyBackward(s.scores, targets, gradient_scale);
  const Device device = embeddings.device();
  Tensor d_unit_candidates = Tensor::Zeros(s.unit_candidates.shape(), DType::kF32, device);
  const Tensor d_scaled_anchors = ops::LinearBackward(d_scores, s.scaled_anchors, s.unit_candidates,
                                                      &d_unit_candidates, nullptr, DType::kF32);
  // Both halves' gradients land in one tensor, rows as the embeddings'.
  Tensor d_embeddings = Tensor::Empty(embeddings.shape(), DType::kF32, device, MemoryCategory::kActivations);
  const int64_t anchors = s.anchors.dim(0);
  Tensor d_anchors = d_embeddings.Slice(0, anchors);
  Tensor d_candidates = d_embeddings.Slice(anchors, embeddings.dim(0));
  if (directions == Directions::kQueryToDoc) {
    ops::NormalizeRowsBackward(d_scaled_anchors, s.anchors, scale, &d_anchors);
    ops::NormalizeRowsBackward(d_unit_candidates, s.candidates, 1.0f, &d_candidates);
    return d_embeddings;
  }
  // Symmetric: the anchors and the positives are also the other direction's candidates and
  // queries; each gets the gradients of both normalisations it went through.
  const Tensor d_back_scores = ops::CrossEntropyBackward(s.back_scores, targets, gradient_scale);
  Tensor d_unit_anchors = Tensor::Zeros(s.unit_anchors.shape(), DType::kF32, device);
  const Tensor d_scaled_positives = ops::LinearBackward(d_back_scores, s.scaled_positives, s.unit_anchors,
                                                        &d_unit_anchors, nullptr, DType::kF32);
  TwoNormalizationsBackward(d_scaled_anchors, d_unit_anchors, s.anchors, scale, &d_anchors);
  Tensor d_positives = d_candidates.Slice(0, anchors);
  TwoNormalizationsBackward(d_scaled_positives, d_unit_candidates.Slice(0, anchors), s.candidates.Slice(0, anchors),
                            scale, &d_positives);
  if (s.candidates.dim(0) > anchors) {  // the hard negatives: candidates only
    Tensor d_negatives = d_candidates.Slice(anchors, s.candidates.dim(0));
    ops::NormalizeRowsBackward(d_unit_candidates.Slice(anchors, s.candidates.dim(0)),
                               s.candidates.Slice(anchors, s.candidates.dim(0)), 1.0f, &d_negatives);
  }
  return d_embeddings;
}

}  // namespace xlmr::train
