#include "framework/ops/loss.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/loss.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/loss.h"
#endif

namespace xlmr::ops {
namespace {

void CheckLogits(const char* op, const char* name, const Tensor& logits) {
  CheckActivation(op, name, logits);
  XLMR_CHECK(logits.rank() == 2 && logits.dim(1) >= 1)
      << op << ": " << name << " must be [N, C] with C >= 1, is " << ShapeString(logits.shape());
}

Device CheckClassification(const char* op, const Tensor& logits, const Tensor& labels,
                           float label_smoothing) {
  const Device device = CommonDevice(op, {logits, labels});
  CheckLogits(op, "logits", logits);
  CheckTensor(op, "labels", labels, DType::kI32, {logits.dim(0)});
  XLMR_CHECK(label_smoothing >= 0.0f && label_smoothing <= 1.0f)
      << op << ": label_smoothing " << label_smoothing << " outside [0, 1]";
  return device;
}

// `inputs` (predictions or logits) [N,C] and f32 targets of the same shape.
Device CheckElementwiseTargets(const char* op, const char* inputs_name, const Tensor& inputs,
                               const Tensor& targets) {
  const Device device = CommonDevice(op, {inputs, targets});
  CheckLogits(op, inputs_name, inputs);
  CheckTensor(op, "targets", targets, DType::kF32, inputs.shape());
  return device;
}

LossSum ToLossSum(const kernels::LossTotals& totals) { return {totals.sum, totals.count}; }

}  // namespace

LossSum CrossEntropyLoss(const Tensor& logits, const Tensor& labels, float label_smoothing) {
  constexpr const char* kOp = "ops::CrossEntropyLoss";
  const Device device = CheckClassification(kOp, logits, labels, label_smoothing);
  return DispatchByDevice(
      kOp, device,
      [&] { return ToLossSum(kernels::cpu::CrossEntropyLossSum(logits, labels, label_smoothing)); },
      XLMR_CUDA_KERNEL(ToLossSum(kernels::cuda::CrossEntropyLossSum(logits, labels, label_smoothing))));
}

Tensor CrossEntropyBackward(const Tensor& logits, const Tensor& labels, float scale,
                            float label_smoothing) {
  constexpr const char* kOp = "ops::CrossEntropyBackward";
  const Device device = CheckClassification(kOp, logits, labels, label_smoothing);
  return DispatchByDevice(
      kOp, device,
      [&] { return kernels::cpu::CrossEntropyBackward(logits, labels, scale, label_smoothing); },
      XLMR_CUDA_KERNEL(kernels::cuda::CrossEntropyBackward(logits, labels, scale, label_smoothing)));
}

LossSum MseLoss(const Tensor& predictions, const Tensor& targets) {
  constexpr const char* kOp = "ops::MseLoss";
  const Device device = CheckElementwiseTargets(kOp, "predictions", predictions, targets);
  return DispatchByDevice(
      kOp, device, [&] { return ToLossSum(kernels::cpu::MseLossSum(predictions, targets)); },
      XLMR_CUDA_KERNEL(ToLossSum(kernels::cuda::MseLossSum(predictions, targets))));
}

Tensor MseBackward(const Tensor& predictions, const Tensor& targets, float scale) {
  constexpr const char* kOp = "ops::MseBackward";
  const Device device = CheckElementwiseTargets(kOp, "predictions", predictions, targets);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::MseBackward(predictions, targets, scale); },
      XLMR_CUDA_KERNEL(kernels::cuda::MseBackward(predictions, targets, scale)));
}

LossSum BceWithLogitsLoss(const Tensor& logits, const Tensor& targets) {
  constexpr const char* kOp = "ops::BceWithLogitsLoss";
  const Device device = CheckElementwiseTargets(kOp, "logits", logits, targets);
  return DispatchByDevice(
      kOp, device, [&] { return ToLossSum(kernels::cpu::BceWithLogitsLossSum(logits, targets)); },
      XLMR_CUDA_KERNEL(ToLossSum(kernels::cuda::BceWithLogitsLossSum(logits, targets))));
}

Tensor BceWithLogitsBackward(const Tensor& logits, const Tensor& targets, float scale) {
  constexpr const char* kOp = "ops::BceWithLogitsBackward";
  const Device device = CheckElementwiseTargets(kOp, "logits", logits, targets);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::BceWithLogitsBackward(logits, targets, scale); },
      XLMR_CUDA_KERNEL(kernels::cuda::BceWithLogitsBackward(logits, targets, scale)));
}

}  // namespace xlmr::ops
