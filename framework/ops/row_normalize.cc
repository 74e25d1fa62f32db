#include "framework/ops/row_normalize.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/row_normalize.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/row_normalize.h"
#endif

namespace xlmr::ops {
Tensor NormalizeRows(const Tensor& x, float multiplier, float eps) {
  constexpr const char* kOp = "ops::NormalizeRows";
  const Device device = CommonDevice(kOp, {x});
  CheckF32Rows(kOp, "x", x);
  XLMR_CHECK(eps > 0.0f) << kOp << ": eps " << eps;
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::NormalizeRows(x, multiplier, eps); },
      XLMR_CUDA_KERNEL(kernels::cuda::NormalizeRows(x, multiplier, eps)));
}

void NormalizeRowsBackward(const Tensor& dy, const Tensor& x, float multiplier, Tensor* dx, float eps) {
  constexpr const char* kOp = "ops::NormalizeRowsBackward";
  XLMR_CHECK(dx != nullptr) << kOp << ": dx is null";
  const Device device = CommonDevice(kOp, {dy, x, *dx});
  CheckF32Rows(kOp, "x", x);
  CheckTensor(kOp, "dy", dy, DType::kF32, x.shape());
  CheckTensor(kOp, "dx", *dx, DType::kF32, x.shape());
  XLMR_CHECK(eps > 0.0f) << kOp << ": eps " << eps;
  DispatchByDevice(
      kOp, device, [&] { kernels::cpu::NormalizeRowsBackward(dy, x, multiplier, eps, dx); },
      XLMR_CUDA_KERNEL(kernels::cuda::NormalizeRowsBackward(dy, x, multiplier, eps, dx)));
}

}  // namespace xlmr::ops
