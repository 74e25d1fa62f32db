// CPU kernels of the training criteria: softmax cross-entropy, mean squared error, binary
// cross-entropy with logits and CoSENT. Everything but CoSENT is computed in fp32 from the exact
// values of logits of any floating dtype, per-element losses summed in double; CoSENT (f32 scores)
// is computed in double throughout, by the arithmetic it shares with the CUDA kernels.
//
// Called through framework/ops/loss.h, which checks shapes and dtypes and documents the
// numerics; these kernels assume them. N = rows, C = columns (classes / labels).
// Gradient convention: no parameters; the logits' gradient is RETURNED (new f32 tensor, `=`).
#ifndef XLMR_KERNELS_CPU_LOSS_H_
#define XLMR_KERNELS_CPU_LOSS_H_

#include <cstdint>

#include "framework/tensor/tensor.h"
#include "kernels/common/loss_totals.h"

namespace xlmr::kernels::cpu {

// [in] logits [N,C] f32|f16|bf16; labels [N] i32 in [0, C) or -100 (ignored; checked, fatal);
// label_smoothing e in [0, 1]. Returns the sum over non-ignored rows of
// (1 - e) * (-log p[label]) + e / C * sum_j(-log p[j])  (p = softmax(row); e = 0: plain
// cross-entropy, computed exactly as without smoothing), and their count.
LossTotals CrossEntropyLossSum(const Tensor& logits, const Tensor& labels, float label_smoothing);
// Returns dlogits [N,C] f32 = scale * (softmax(row) - (1 - e) onehot(label) - e / C), computed
// as scale * softmax - scale * e / C, then scale * (1 - e) off the label; ignored rows are 0.
Tensor CrossEntropyBackward(const Tensor& logits, const Tensor& labels, float scale,
                            float label_smoothing);

// [in] predictions [N,C] f32|f16|bf16; targets [N,C] f32. Returns sum (p - t)^2 and N*C.
LossTotals MseLossSum(const Tensor& predictions, const Tensor& targets);
// Returns dpredictions [N,C] f32 = (2 * scale) * (p - t).
Tensor MseBackward(const Tensor& predictions, const Tensor& targets, float scale);

// [in] logits [N,C] f32|f16|bf16; targets [N,C] f32 in [0, 1]. Returns the sum of
// max(x, 0) - x * t + log1p(exp(-|x|)) and N*C.
LossTotals BceWithLogitsLossSum(const Tensor& logits, const Tensor& targets);
// Returns dlogits [N,C] f32 = (sigmoid(x) - t) * scale.
Tensor BceWithLogitsBackward(const Tensor& logits, const Tensor& targets, float scale);

// [in] scores [N] f32 (scale * cosine); labels [N] f32. Returns sentence-transformers' CoSENT loss
// log(1 + sum over pairs y[i] < y[j] of exp(s[i] - s[j])) in double, stable and in the order of
// kernels/common/cosent.h, and 1 term (0 when N = 0).
LossTotals CosentLossSum(const Tensor& scores, const Tensor& labels);
// Returns dscores [N] f32 = scale * d loss / d scores (kernels/common/cosent.h).
Tensor CosentBackward(const Tensor& scores, const Tensor& labels, float scale);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_LOSS_H_
