#include "framework/ops/step_decisions.h"

#include <algorithm>

#include "framework/core/check.h"
#include "framework/ops/dispatch.h"
#include "framework/ops/optim.h"
#include "kernels/cpu/optim.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/optim.h"
#include "kernels/cuda/step_row_reader.h"
#else
// A build without CUDA never makes a reader; completing the type lets StepRowReads' unique_ptr
// be destroyed (--config=cpu).
namespace xlmr::kernels::cuda {
class StepRowReader {};
}  // namespace xlmr::kernels::cuda
#endif

namespace xlmr::ops {
namespace {

using kernels::kStepSlots;

void CheckState(const char* op, const Tensor& state, int row) {
  XLMR_CHECK(state.defined() && state.dtype() == DType::kI64 && state.numel() == kernels::kStepStateDoubles)
      << op << ": the step state must come from MakeStepState";
  XLMR_CHECK(row >= 0 && row < kernels::kStepStateAllRows) << op << ": row " << row;
}

void CheckF32(const char* op, const Tensor& t) {
  XLMR_CHECK(t.defined() && t.dtype() == DType::kF32) << op << ": gradients must be f32";
}

// The row's doubles, and the row's StepInputs, at their addresses on the state's device.
double* HostRow(const Tensor& state, int row) {
  return static_cast<double*>(state.raw_data()) + int64_t{row} * kStepSlots;
}
kernels::StepInputs* InputsOf(const Tensor& state, int row) {
  return reinterpret_cast<kernels::StepInputs*>(static_cast<double*>(state.raw_data()) +
                                                kernels::kStepInputsOffsetDoubles + row * kernels::kStepInputsDoubles);
}

}  // namespace

Tensor MakeStepState(Device device) {
  return Tensor::Zeros({kernels::kStepStateDoubles}, DType::kI64, device, MemoryCategory::kWorkspace);
}

void WriteStepInputs(Tensor& state, int row, const kernels::StepInputs& inputs) {
  constexpr const char* kOp = "ops::WriteStepInputs";
  CheckState(kOp, state, row);
  XLMR_CHECK(inputs.loss_terms > 0) << kOp << ": " << inputs.loss_terms << " loss terms";
  XLMR_CHECK(inputs.candidates.count >= 1 && inputs.candidates.count <= kernels::kMaxAdamWCandidates)
      << kOp << ": " << inputs.candidates.count << " AdamW candidates";
  CopyBytes(InputsOf(state, row), state.device(), &inputs, Device::kCpu, sizeof(inputs));
}

const uint32_t* DropoutStepOnDevice(const Tensor& state, int row) {
  CheckState("ops::DropoutStepOnDevice", state, row);
  return state.device() == Device::kCpu ? nullptr : &InputsOf(state, row)->dropout_step;
}

std::vector<double> ReadStepRow(const Tensor& state, int row) {
  CheckState("ops::ReadStepRow", state, row);
  std::vector<double> values(kStepSlots);
  CopyBytes(values.data(), Device::kCpu, HostRow(state, row), state.device(), kStepSlots * sizeof(double));
  return values;
}

void WriteStepRow(Tensor& state, int row, const std::vector<double>& values) {
  CheckState("ops::WriteStepRow", state, row);
  XLMR_CHECK(values.size() == kStepSlots) << "ops::WriteStepRow: " << values.size() << " values";
  CopyBytes(HostRow(state, row), state.device(), values.data(), Device::kCpu, kStepSlots * sizeof(double));
}

// Not ops of the profiler (no DispatchByDevice): copies of a few bytes, not kernels.
StepRowReads::StepRowReads(Device device) : device_(device) {
#ifdef XLMR_WITH_CUDA
  if (device == Device::kCuda) cuda_ = std::make_unique<kernels::cuda::StepRowReader>();
#endif
  XLMR_CHECK(device == Device::kCpu || cuda_ != nullptr) << "ops::StepRowReads: no CUDA in this build";
}

StepRowReads::~StepRowReads() = default;

void StepRowReads::Queue(const Tensor& state, int row) {
  CheckState("ops::StepRowReads::Queue", state, row);
  XLMR_CHECK(state.device() == device_) << "ops::StepRowReads::Queue: the state is on another device";
#ifdef XLMR_WITH_CUDA
  if (cuda_ != nullptr) cuda_->Queue(row, HostRow(state, row));
#endif
}

std::vector<double> StepRowReads::Read(const Tensor& state, int row) {
  CheckState("ops::StepRowReads::Read", state, row);
  std::vector<double> values(kStepSlots);
#ifdef XLMR_WITH_CUDA
  if (cuda_ != nullptr) {
    cuda_->Read(row, values.data());
    return values;
  }
#endif
  const double* host = HostRow(state, row);  // the CPU's ring is host memory
  values.assign(host, host + kStepSlots);
  return values;
}

void CopyStepRow(Tensor& state, int from, int to) {
  constexpr const char* kOp = "ops::CopyStepRow";
  CheckState(kOp, state, from);
  CheckState(kOp, state, to);
  DispatchByDevice(
      kOp, state.device(),
      [&] { std::copy_n(HostRow(state, from), kStepSlots, HostRow(state, to)); },
      XLMR_CUDA_KERNEL(kernels::cuda::CopyStepRow(HostRow(state, from), HostRow(state, to))));
}

void BeginStepState(Tensor& state, int row, int previous) {
  constexpr const char* kOp = "ops::BeginStepState";
  CheckState(kOp, state, row);
  CheckState(kOp, state, previous);
  DispatchByDevice(
      kOp, state.device(),
      [&] {
        kernels::BeginStepRow(HostRow(state, previous), HostRow(state, row), InputsOf(state, row)->loss_terms);
      },
      XLMR_CUDA_KERNEL(kernels::cuda::BeginStepState(HostRow(state, previous), HostRow(state, row),
                                                     &InputsOf(state, row)->loss_terms)));
}

int64_t StepSlotElement(int row, kernels::StepSlot slot) {
  XLMR_CHECK(row >= 0 && row < kernels::kStepStateAllRows) << "ops::StepSlotElement: row " << row;
  return int64_t{row} * kStepSlots + slot;
}

void FlagNonFiniteAndSumSquares(const Tensor& grads, Tensor& state, int row, bool unscale) {
  constexpr const char* kOp = "ops::FlagNonFiniteAndSumSquares";
  const Device device = CommonDevice(kOp, {grads, state});
  CheckF32(kOp, grads);
  CheckState(kOp, state, row);
  if (grads.numel() == 0) return;  // BeginStepState left the flag and the sum 0
  DispatchByDevice(
      kOp, device,
      [&] {
        double* r = HostRow(state, row);
        const kernels::cpu::FiniteAndSumOfSquares pass = kernels::cpu::FlagAndSumOfSquaresRange(
            grads.data<float>(), grads.numel(), unscale ? kernels::InverseScaleOf(r) : 1.0f);
        if (!pass.finite) r[kernels::kSlotFoundInf] = 1.0;
        r[kernels::kSlotSumOfSquares] = pass.sum_of_squares;
      },
      XLMR_CUDA_KERNEL(kernels::cuda::FlagNonFiniteAndSumSquares(grads, HostRow(state, row), unscale)));
}

void AdamWStepWithState(const std::vector<kernels::AdamWDecayRun>& runs, Tensor& param, Tensor& grad,
                        Tensor& exp_avg, Tensor& exp_avg_sq, Tensor* half_param, const Tensor& state, int row,
                        const RawGradientRule& rule, int64_t half_first) {
  constexpr const char* kOp = "ops::AdamWStepWithState";
  const Device device = CommonDevice(
      kOp, {param, grad, exp_avg, exp_avg_sq, state, half_param != nullptr ? *half_param : Tensor()});
  CheckState(kOp, state, row);
  CheckHalfCopyWindow(kOp, runs, half_param, half_first);
  DispatchByDevice(
      kOp, device,
      [&] {
        const AdamWCandidates& candidates = InputsOf(state, row)->candidates;
        double* r = HostRow(state, row);
        const bool skips = kernels::StepSkips(r);
        const int chosen = skips ? -1 : kernels::AdamWCandidateOf(r, candidates);
        if (chosen < 0) {
          if (!skips) r[kernels::kSlotCandidateError] = 1.0;
          kernels::cpu::ClearRange(grad.data<float>(), grad.numel());
          return;
        }
        const float inverse_scale = rule.unscale ? kernels::InverseScaleOf(r) : 1.0f;
        kernels::cpu::AdamWStepFromRawGradients(candidates.scalars[chosen], runs, inverse_scale,
                                                kernels::ClipCoefficientOf(r, rule.max_grad_norm), param, grad,
                                                exp_avg, exp_avg_sq, half_param, half_first);
      },
      XLMR_CUDA_KERNEL(kernels::cuda::AdamWStepWithState(&InputsOf(state, row)->candidates, runs, param, grad,
                                                         exp_avg, exp_avg_sq,
                                                         half_param, half_first, HostRow(state, row),
                                                         rule.unscale, rule.max_grad_norm)));
}

void FinishStepState(Tensor& state, int row, const LossScaleRule& rule) {
  constexpr const char* kOp = "ops::FinishStepState";
  CheckState(kOp, state, row);
  DispatchByDevice(
      kOp, state.device(), [&] { kernels::FinishStepRow(HostRow(state, row), rule); },
      XLMR_CUDA_KERNEL(kernels::cuda::FinishStepState(HostRow(state, row), rule)));
}

}  // namespace xlmr::ops
