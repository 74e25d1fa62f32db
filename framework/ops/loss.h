// Training criteria: the classification head's, as PyTorch computes them (HF's
// XLMRobertaForSequenceClassification: CrossEntropyLoss for single-label classification,
// MSELoss for regression, BCEWithLogitsLoss for multi-label), and sentence-transformers'
// CoSENTLoss for scored sentence pairs (in double; below). The first three in fp32 from logits
// of any activation dtype (autocast runs these losses in fp32). Stable forms: cross-entropy
// through log-softmax with max subtraction; BCE as max(x, 0) - x t + log1p(exp(-|x|)).
//
// The losses return a SUM and its term count instead of a mean, so that the caller can form
// the mean over the whole (global, accumulated) batch: mean loss = sum / count. Each backward
// takes `scale` = loss_scale / (count of the global batch), so that summing the gradients of
// the micro-batches gives loss_scale times the gradient of the mean over the whole batch.
// Training keeps both on the logits' device (issue 38: nothing in a step waits for it): the
// Accumulate* forms add the sum into a double of the step state, and the backward reads its
// scale from there (GradientScale::InState) when it runs.
//
// Gradient convention: no parameters; the logits' gradient is RETURNED as a new f32 tensor
// (`=`), kActivations. To feed an f16 or bf16 graph, round it with ops::Cast: torch rounds the
// fp32 loss gradient to the logits' dtype at the same point, once.
#ifndef XLMR_FRAMEWORK_OPS_LOSS_H_
#define XLMR_FRAMEWORK_OPS_LOSS_H_

#include <cstdint>

#include "framework/tensor/tensor.h"
#include "kernels/common/gradient_scale.h"

namespace xlmr::ops {

// A backward's `scale`: a float (implicitly, as every caller but training passes it), or the
// double at index `element` of `state` (an I64 tensor whose bytes are doubles, on the logits'
// device, holding a float's value: framework/ops/step_decisions.h's state), read when the
// backward runs; `state` must outlive the backward's queued work.
class GradientScale {
 public:
  GradientScale(float value) : value_(value) {}  // NOLINT(google-explicit-constructor): a factor
  static GradientScale InState(const Tensor& state, int64_t element);

  // Where the kernels of `device` read it (a stored scale must live there).
  kernels::GradientScaleSource Source(const char* op, Device device) const;

 private:
  GradientScale(const double* stored, Device device) : stored_(stored), device_(device) {}
  float value_ = 1.0f;
  const double* stored_ = nullptr;
  Device device_ = Device::kCpu;
};

struct LossSum {
  double sum = 0.0;   // sum of the per-term losses
  int64_t count = 0;  // terms in the sum: CE: non-ignored rows; MSE, BCE: N * C; CoSENT: 1 (0 if N = 0)
};

// [in] logits [N,C] f32|f16|bf16, C >= 1; labels [N] i32 in [0, C), or -100 to ignore the row
// (any other value is a fatal check: the data layer validates labels); label_smoothing e in
// [0, 1] (--label_smoothing_factor).
// Per row: (1 - e) * (-log p[label]) + e / C * sum_j(-log p[j]), p = softmax(logits): HF's
// LabelSmoother (transformers.trainer_pt_utils), whose mean over the non-ignored rows is this
// sum over the count. Ignored rows count in neither term. With e = 0 it is plain
// cross-entropy, logsumexp(logits) - logits[label], computed exactly as it was without smoothing.
LossSum CrossEntropyLoss(const Tensor& logits, const Tensor& labels, float label_smoothing = 0.0f);
// Returns dlogits [N,C] f32 = scale * (softmax(logits) - (1 - e) onehot(label) - e / C);
// ignored rows are 0.
Tensor CrossEntropyBackward(const Tensor& logits, const Tensor& labels, GradientScale scale,
                            float label_smoothing = 0.0f);
// totals[element] += CrossEntropyLoss(...).sum, on the logits' device, the same bits, without
// waiting for it. [in,out] totals: I64 tensor whose bytes are doubles (the step state).
void AccumulateCrossEntropyLoss(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                Tensor& totals, int64_t element);

// [in] predictions [N,C] f32|f16|bf16; targets [N,C] f32. Per element: (p - t)^2.
LossSum MseLoss(const Tensor& predictions, const Tensor& targets);
// Returns dpredictions [N,C] f32 = scale * 2 * (p - t).
Tensor MseBackward(const Tensor& predictions, const Tensor& targets, GradientScale scale);
// totals[element] += MseLoss(...).sum, as AccumulateCrossEntropyLoss.
void AccumulateMseLoss(const Tensor& predictions, const Tensor& targets, Tensor& totals, int64_t element);

// [in] logits [N,C] f32|f16|bf16; targets [N,C] f32 in [0, 1]. Per element:
// -(t log sigmoid(x) + (1 - t) log(1 - sigmoid(x))), in the stable form above.
LossSum BceWithLogitsLoss(const Tensor& logits, const Tensor& targets);
// totals[element] += BceWithLogitsLoss(...).sum, as AccumulateCrossEntropyLoss.
void AccumulateBceWithLogitsLoss(const Tensor& logits, const Tensor& targets, Tensor& totals, int64_t element);
// Returns dlogits [N,C] f32 = scale * (sigmoid(x) - t).
Tensor BceWithLogitsBackward(const Tensor& logits, const Tensor& targets, GradientScale scale);

// sentence-transformers' CoSENTLoss (losses/cosent.py) on its scores s = scale * cosine (e.g.
// ops::RowDots of the normalised sides, framework/ops/row_dot.h) and float labels y:
//   loss = log(1 + sum over ordered pairs (i, j) with y[i] < y[j] of exp(s[i] - s[j])),
// ties making no pair; computed in double, stable (kernels/common/cosent.h), in one order on both
// backends. They agree nearly, not always to the last bit: to a few double ulps, as CUDA's and
// glibc's exp/log may round 1 ulp apart; the gradients are the same float or its neighbour.
// [in] scores [N] f32, labels [N] f32, one device. Returns {loss, N > 0 ? 1 : 0}: one term per batch
// (sentence-transformers returns the loss itself, not a mean).
LossSum CosentLoss(const Tensor& scores, const Tensor& labels);
// totals[element] += CosentLoss(...).sum on the scores' device, the same bits, without waiting (as AccumulateMseLoss).
void AccumulateCosentLoss(const Tensor& scores, const Tensor& labels, Tensor& totals, int64_t element);
// Returns dscores [N] f32 = scale * d(loss)/d(scores) (new, kActivations): for score k, the sum of
// w_kj over its pairs (k, j) minus the sum of w_ik over its pairs (i, k), w_ij = exp(s[i] - s[j]) / (1 +
// the sum of them all), computed in double and rounded once.
Tensor CosentBackward(const Tensor& scores, const Tensor& labels, GradientScale scale);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_LOSS_H_
