// CUDA kernels of the training criteria (softmax cross-entropy, mean squared error, binary
// cross-entropy with logits, CoSENT): the GPU twin of kernels/cpu/loss.h, with the same contract.
// CoSENT is computed in double by kernels/common/cosent.h, the CPU's arithmetic; the others
// are computed in fp32 from the exact values of f32|f16|bf16 inputs; per-term losses are
// fp32 and summed in double by a two-level reduction whose shape depends only on the element
// count, so a sum is reproducible run to run (it differs from the CPU's sequential double sum
// only by summation order).
//
// Called through framework/ops/loss.h, which checks shapes, dtypes and devices and documents
// the numerics; these kernels assume them. N = rows, C = columns (classes / labels).
// All work is queued on CudaContext::Current().compute_stream(); the *LossSum functions wait
// for their result (they return host values); Add*LossSum and the backward functions are
// asynchronous (training: a step's loss and its gradient's scale stay on the device).
// Labels outside [0, C) other than -100 are a bug upstream: the kernel prints the row and the
// label and traps, which the next checked CUDA call reports as a fatal error (the forward's own
// synchronisation, for *LossSum).
// Gradient convention: no parameters; the logits' gradient is RETURNED (new f32 tensor, `=`).
#ifndef XLMR_KERNELS_CUDA_LOSS_H_
#define XLMR_KERNELS_CUDA_LOSS_H_

#include <cstdint>

#include "framework/tensor/tensor.h"
#include "kernels/common/gradient_scale.h"
#include "kernels/common/loss_totals.h"

namespace xlmr::kernels::cuda {

// A summed loss and how many terms it has: the CPU backend's struct, so the ops layer sees one.

// [in] logits [N,C] f32|f16|bf16, Device::kCuda; labels [N] i32 on the device, in [0, C) or -100
// (ignored); label_smoothing e in [0, 1]. Returns the sum over non-ignored rows of
// (1 - e) * (-log p[label]) + e / C * sum_j(-log p[j]) (e = 0: plain cross-entropy, computed
// exactly as without smoothing), and their count.
LossTotals CrossEntropyLossSum(const Tensor& logits, const Tensor& labels, float label_smoothing);
// *add_to (device memory) += CrossEntropyLossSum's sum, the same bits, without waiting.
void AddCrossEntropyLossSum(const Tensor& logits, const Tensor& labels, float label_smoothing,
                            double* add_to);
// Returns dlogits [N,C] f32 = scale * (softmax(row) - (1 - e) onehot(label) - e / C); ignored
// rows are 0. A stored scale is device memory.
Tensor CrossEntropyBackward(const Tensor& logits, const Tensor& labels, GradientScaleSource scale,
                            float label_smoothing);

// [in] predictions [N,C] f32|f16|bf16; targets [N,C] f32. Returns sum (p - t)^2 and N*C.
LossTotals MseLossSum(const Tensor& predictions, const Tensor& targets);
// *add_to (device memory) += MseLossSum's sum, the same bits, without waiting.
void AddMseLossSum(const Tensor& predictions, const Tensor& targets, double* add_to);
// Returns dpredictions [N,C] f32 = (2 * scale) * (p - t).
Tensor MseBackward(const Tensor& predictions, const Tensor& targets, GradientScaleSource scale);

// [in] logits [N,C] f32|f16|bf16; targets [N,C] f32 in [0, 1]. Returns the sum of
// max(x, 0) - x * t + log1p(exp(-|x|)) and N*C.
LossTotals BceWithLogitsLossSum(const Tensor& logits, const Tensor& targets);
// *add_to (device memory) += BceWithLogitsLossSum's sum, the same bits, without waiting.
void AddBceWithLogitsLossSum(const Tensor& logits, const Tensor& targets, double* add_to);
// Returns dlogits [N,C] f32 = (sigmoid(x) - t) * scale.
Tensor BceWithLogitsBackward(const Tensor& logits, const Tensor& targets, GradientScaleSource scale);

// [in] scores [N] f32, labels [N] f32, Device::kCuda. Returns sentence-transformers' CoSENT loss in
// double (kernels/common/cosent.h: one block, the CPU's order, exp/log within an ulp of glibc's) and
// 1 term (0 when N = 0).
LossTotals CosentLossSum(const Tensor& scores, const Tensor& labels);
// *add_to (device memory) += CosentLossSum's sum, the same bits, without waiting.
void AddCosentLossSum(const Tensor& scores, const Tensor& labels, double* add_to);
// Returns dscores [N] f32 = scale * d loss / d scores, a thread per score. A stored scale is device
// memory.
Tensor CosentBackward(const Tensor& scores, const Tensor& labels, GradientScaleSource scale);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_LOSS_H_
