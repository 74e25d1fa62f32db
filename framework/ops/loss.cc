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

// CoSENT's scores [N] and float labels [N] on one device.
Device CheckScored(const char* op, const Tensor& scores, const Tensor& labels) {
  const Device device = CommonDevice(op, {scores, labels});
  XLMR_CHECK(scores.defined() && scores.dtype() == DType::kF32 && scores.rank() == 1)
      << op << ": scores must be [N] f32";
  CheckTensor(op, "labels", labels, DType::kF32, scores.shape());
  return device;
}

LossSum ToLossSum(const kernels::LossTotals& totals) { return {totals.sum, totals.count}; }

// The double at `element` of `totals` (an I64 tensor whose bytes are doubles) on `device`.
double* TotalAt(const char* op, Tensor& totals, int64_t element, Device device) {
  XLMR_CHECK(totals.defined() && totals.dtype() == DType::kI64 && element >= 0 && element < totals.numel())
      << op << ": element " << element << " of the totals";
  XLMR_CHECK(totals.device() == device) << op << ": the totals must be on the inputs' device";
  return static_cast<double*>(totals.raw_data()) + element;
}

}  // namespace

GradientScale GradientScale::InState(const Tensor& state, int64_t element) {
  XLMR_CHECK(state.defined() && state.dtype() == DType::kI64 && element >= 0 && element < state.numel())
      << "GradientScale::InState: element " << element << " of the state";
  return GradientScale(static_cast<const double*>(state.raw_data()) + element, state.device());
}

kernels::GradientScaleSource GradientScale::Source(const char* op, Device device) const {
  if (stored_ == nullptr) return {value_, nullptr};
  XLMR_CHECK(device_ == device) << op << ": the gradient scale must be on the logits' device";
  return {value_, stored_};
}

LossSum CrossEntropyLoss(const Tensor& logits, const Tensor& labels, float label_smoothing) {
  constexpr const char* kOp = "ops::CrossEntropyLoss";
  const Device device = CheckClassification(kOp, logits, labels, label_smoothing);
  return DispatchByDevice(
      kOp, device,
      [&] { return ToLossSum(kernels::cpu::CrossEntropyLossSum(logits, labels, label_smoothing)); },
      XLMR_CUDA_KERNEL(ToLossSum(kernels::cuda::CrossEntropyLossSum(logits, labels, label_smoothing))));
}

Tensor CrossEntropyBackward(const Tensor& logits, const Tensor& labels, GradientScale scale,
                            float label_smoothing) {
  constexpr const char* kOp = "ops::CrossEntropyBackward";
  const Device device = CheckClassification(kOp, logits, labels, label_smoothing);
  const kernels::GradientScaleSource source = scale.Source(kOp, device);
  return DispatchByDevice(
      kOp, device,
      [&] { return kernels::cpu::CrossEntropyBackward(logits, labels, source.Resolve(), label_smoothing); },
      XLMR_CUDA_KERNEL(kernels::cuda::CrossEntropyBackward(logits, labels, source, label_smoothing)));
}

void AccumulateCrossEntropyLoss(const Tensor& logits, const Tensor& labels, float label_smoothing,
                                Tensor& totals, int64_t element) {
  constexpr const char* kOp = "ops::AccumulateCrossEntropyLoss";
  const Device device = CheckClassification(kOp, logits, labels, label_smoothing);
  double* total = TotalAt(kOp, totals, element, device);
  DispatchByDevice(
      kOp, device,
      [&] { *total += kernels::cpu::CrossEntropyLossSum(logits, labels, label_smoothing).sum; },
      XLMR_CUDA_KERNEL(kernels::cuda::AddCrossEntropyLossSum(logits, labels, label_smoothing, total)));
}

LossSum MseLoss(const Tensor& predictions, const Tensor& targets) {
  constexpr const char* kOp = "ops::MseLoss";
  const Device device = CheckElementwiseTargets(kOp, "predictions", predictions, targets);
  return DispatchByDevice(
      kOp, device, [&] { return ToLossSum(kernels::cpu::MseLossSum(predictions, targets)); },
      XLMR_CUDA_KERNEL(ToLossSum(kernels::cuda::MseLossSum(predictions, targets))));
}

Tensor MseBackward(const Tensor& predictions, const Tensor& targets, GradientScale scale) {
  constexpr const char* kOp = "ops::MseBackward";
  const Device device = CheckElementwiseTargets(kOp, "predictions", predictions, targets);
  const kernels::GradientScaleSource source = scale.Source(kOp, device);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::MseBackward(predictions, targets, source.Resolve()); },
      XLMR_CUDA_KERNEL(kernels::cuda::MseBackward(predictions, targets, source)));
}

void AccumulateMseLoss(const Tensor& predictions, const Tensor& targets, Tensor& totals, int64_t element) {
  constexpr const char* kOp = "ops::AccumulateMseLoss";
  const Device device = CheckElementwiseTargets(kOp, "predictions", predictions, targets);
  double* total = TotalAt(kOp, totals, element, device);
  DispatchByDevice(
      kOp, device, [&] { *total += kernels::cpu::MseLossSum(predictions, targets).sum; },
      XLMR_CUDA_KERNEL(kernels::cuda::AddMseLossSum(predictions, targets, total)));
}

void AccumulateBceWithLogitsLoss(const Tensor& logits, const Tensor& targets, Tensor& totals, int64_t element) {
  constexpr const char* kOp = "ops::AccumulateBceWithLogitsLoss";
  const Device device = CheckElementwiseTargets(kOp, "logits", logits, targets);
  double* total = TotalAt(kOp, totals, element, device);
  DispatchByDevice(
      kOp, device, [&] { *total += kernels::cpu::BceWithLogitsLossSum(logits, targets).sum; },
      XLMR_CUDA_KERNEL(kernels::cuda::AddBceWithLogitsLossSum(logits, targets, total)));
}

LossSum BceWithLogitsLoss(const Tensor& logits, const Tensor& targets) {
  constexpr const char* kOp = "ops::BceWithLogitsLoss";
  const Device device = CheckElementwiseTargets(kOp, "logits", logits, targets);
  return DispatchByDevice(
      kOp, device, [&] { return ToLossSum(kernels::cpu::BceWithLogitsLossSum(logits, targets)); },
      XLMR_CUDA_KERNEL(ToLossSum(kernels::cuda::BceWithLogitsLossSum(logits, targets))));
}

Tensor BceWithLogitsBackward(const Tensor& logits, const Tensor& targets, GradientScale scale) {
  constexpr const char* kOp = "ops::BceWithLogitsBackward";
  const Device device = CheckElementwiseTargets(kOp, "logits", logits, targets);
  const kernels::GradientScaleSource source = scale.Source(kOp, device);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::BceWithLogitsBackward(logits, targets, source.Resolve()); },
      XLMR_CUDA_KERNEL(kernels::cuda::BceWithLogitsBackward(logits, targets, source)));
}

LossSum CosentLoss(const Tensor& scores, const Tensor& labels) {
  constexpr const char* kOp = "ops::CosentLoss";
  const Device device = CheckScored(kOp, scores, labels);
  return DispatchByDevice(
      kOp, device, [&] { return ToLossSum(kernels::cpu::CosentLossSum(scores, labels)); },
      XLMR_CUDA_KERNEL(ToLossSum(kernels::cuda::CosentLossSum(scores, labels))));
}

void AccumulateCosentLoss(const Tensor& scores, const Tensor& labels, Tensor& totals, int64_t element) {
  constexpr const char* kOp = "ops::AccumulateCosentLoss";
  const Device device = CheckScored(kOp, scores, labels);
  double* total = TotalAt(kOp, totals, element, device);
  DispatchByDevice(
      kOp, device, [&] { *total += kernels::cpu::CosentLossSum(scores, labels).sum; },
      XLMR_CUDA_KERNEL(kernels::cuda::AddCosentLossSum(scores, labels, total)));
}

Tensor CosentBackward(const Tensor& scores, const Tensor& labels, GradientScale scale) {
  constexpr const char* kOp = "ops::CosentBackward";
  const Device device = CheckScored(kOp, scores, labels);
  const kernels::GradientScaleSource source = scale.Source(kOp, device);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::CosentBackward(scores, labels, source.Resolve()); },
      XLMR_CUDA_KERNEL(kernels::cuda::CosentBackward(scores, labels, source)));
}

}  // namespace xlmr::ops
