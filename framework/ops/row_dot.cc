#include "framework/ops/row_dot.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/row_dot.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/row_dot.h"
#endif

namespace xlmr::ops {
Tensor RowDots(const Tensor& a, const Tensor& b) {
  constexpr const char* kOp = "ops::RowDots";
  const Device device = CommonDevice(kOp, {a, b});
  CheckF32Rows(kOp, "a", a);
  CheckTensor(kOp, "b", b, DType::kF32, a.shape());
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::RowDots(a, b); },
      XLMR_CUDA_KERNEL(kernels::cuda::RowDots(a, b)));
}

void RowDotsBackward(const Tensor& d_dots, const Tensor& a, const Tensor& b, Tensor* da, Tensor* db) {
  constexpr const char* kOp = "ops::RowDotsBackward";
  XLMR_CHECK(da != nullptr && db != nullptr) << kOp << ": da or db is null";
  const Device device = CommonDevice(kOp, {d_dots, a, b, *da, *db});
  CheckF32Rows(kOp, "a", a);
  CheckTensor(kOp, "b", b, DType::kF32, a.shape());
  CheckTensor(kOp, "d_dots", d_dots, DType::kF32, {a.dim(0)});
  CheckTensor(kOp, "da", *da, DType::kF32, a.shape());
  CheckTensor(kOp, "db", *db, DType::kF32, a.shape());
  DispatchByDevice(
      kOp, device, [&] { kernels::cpu::RowDotsBackward(d_dots, a, b, da, db); },
      XLMR_CUDA_KERNEL(kernels::cuda::RowDotsBackward(d_dots, a, b, da, db)));
}

}  // namespace xlmr::ops
