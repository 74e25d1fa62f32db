#include "framework/ops/optim.h"

#include "framework/core/check.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/optim.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/optim.h"
#endif

namespace xlmr::ops {
namespace {

// A buffer of f32 values (the passes treat every tensor as flat).
void CheckF32(const char* op, const char* name, const Tensor& t) {
  XLMR_CHECK(t.defined()) << op << ": " << name << " is undefined";
  XLMR_CHECK(t.dtype() == DType::kF32)
      << op << ": " << name << " must be f32, is " << DTypeName(t.dtype());
}

// What AdamWStep needs of its buffers and runs beyond their device.
void CheckAdamWArguments(const char* op, const std::vector<AdamWDecayRun>& runs,
                         const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                         const Tensor& exp_avg_sq, const Tensor* half_param) {
  CheckF32(op, "param", param);
  CheckF32(op, "grad", grad);
  CheckF32(op, "exp_avg", exp_avg);
  CheckF32(op, "exp_avg_sq", exp_avg_sq);
  const int64_t total = param.numel();
  XLMR_CHECK(grad.numel() == total && exp_avg.numel() == total && exp_avg_sq.numel() == total)
      << op << ": param, grad, exp_avg, exp_avg_sq must have the same element count; got " << total
      << ", " << grad.numel() << ", " << exp_avg.numel() << ", " << exp_avg_sq.numel();
  if (half_param != nullptr) {
    XLMR_CHECK(half_param->dtype() == DType::kF16 || half_param->dtype() == DType::kBF16)
        << op << ": half_param must be f16 or bf16, is " << DTypeName(half_param->dtype());
  }
  int64_t previous_end = 0;
  for (const AdamWDecayRun& run : runs) {
    XLMR_CHECK(run.offset >= previous_end && run.size >= 0 && run.offset + run.size <= total)
        << op << ": run [" << run.offset << ", " << run.offset + run.size
        << ") is out of order or outside [0, " << total << ")";
    previous_end = run.offset + run.size;
  }
}

}  // namespace

void CheckHalfCopyWindow(const char* op, const std::vector<AdamWDecayRun>& runs, const Tensor* half_param,
                         int64_t half_first) {
  if (half_param == nullptr) return;
  const int64_t window_end = half_first + half_param->numel();
  for (const AdamWDecayRun& run : runs) {
    XLMR_CHECK(!run.half_copy || run.size == 0 || (run.offset >= half_first && run.offset + run.size <= window_end))
        << op << ": run [" << run.offset << ", " << run.offset + run.size << ") writes the half copy outside its "
        << "window [" << half_first << ", " << window_end << ")";
  }
}

void AdamWStep(const AdamWStepScalars& scalars, const std::vector<AdamWDecayRun>& runs,
               Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
               Tensor* half_param, int64_t half_first) {
  constexpr const char* kOp = "ops::AdamWStep";
  const Device device = CommonDevice(
      kOp, {param, grad, exp_avg, exp_avg_sq, half_param != nullptr ? *half_param : Tensor()});
  CheckAdamWArguments(kOp, runs, param, grad, exp_avg, exp_avg_sq, half_param);
  CheckHalfCopyWindow(kOp, runs, half_param, half_first);
  DispatchByDevice(
      kOp, device,
      [&] { kernels::cpu::AdamWStep(scalars, runs, param, grad, exp_avg, exp_avg_sq, half_param, half_first); },
      XLMR_CUDA_KERNEL(kernels::cuda::AdamWStep(scalars, runs, param, grad, exp_avg, exp_avg_sq, half_param,
                                                half_first)));
}

bool UnscaleAndCheckFinite(Tensor& grads, float inv_scale) {
  constexpr const char* kOp = "ops::UnscaleAndCheckFinite";
  const Device device = CommonDevice(kOp, {grads});
  CheckF32(kOp, "grads", grads);
  return DispatchByDevice(
      kOp, device,
      [&] {
        return kernels::cpu::UnscaleAndCheckFiniteRange(grads.data<float>(), grads.numel(),
                                                        inv_scale);
      },
      XLMR_CUDA_KERNEL(kernels::cuda::UnscaleAndCheckFinite(grads, inv_scale)));
}

bool AllFinite(const Tensor& values) {
  constexpr const char* kOp = "ops::AllFinite";
  const Device device = CommonDevice(kOp, {values});
  CheckF32(kOp, "values", values);
  return DispatchByDevice(
      kOp, device,
      [&] { return kernels::cpu::AllFiniteRange(values.data<float>(), values.numel()); },
      XLMR_CUDA_KERNEL(kernels::cuda::AllFinite(values)));
}

double SumOfSquares(const Tensor& values) {
  constexpr const char* kOp = "ops::SumOfSquares";
  const Device device = CommonDevice(kOp, {values});
  CheckF32(kOp, "values", values);
  return DispatchByDevice(
      kOp, device,
      [&] { return kernels::cpu::SumOfSquaresRange(values.data<float>(), values.numel()); },
      XLMR_CUDA_KERNEL(kernels::cuda::SumOfSquares(values)));
}

void ScaleInPlace(Tensor& values, float factor) {
  constexpr const char* kOp = "ops::ScaleInPlace";
  const Device device = CommonDevice(kOp, {values});
  CheckF32(kOp, "values", values);
  DispatchByDevice(
      kOp, device, [&] { kernels::cpu::ScaleRange(values.data<float>(), values.numel(), factor); },
      XLMR_CUDA_KERNEL(kernels::cuda::ScaleInPlace(values, factor)));
}

}  // namespace xlmr::ops
