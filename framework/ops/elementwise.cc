#include "framework/ops/elementwise.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/elementwise.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/elementwise.h"
#endif

namespace xlmr::ops {

Tensor Add(const Tensor& a, const Tensor& b, DType out_dtype) {
  constexpr const char* kOp = "ops::Add";
  const Device device = CommonDevice(kOp, {a, b});
  CheckActivation(kOp, "a", a);
  CheckActivation(kOp, "b", b);
  CheckSameShape(kOp, "a", a, "b", b);
  CheckOutputDType(kOp, out_dtype);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::AddForward(a, b, out_dtype); },
      XLMR_CUDA_KERNEL(kernels::cuda::AddForward(a, b, out_dtype)));
}

Tensor Cast(const Tensor& x, DType dtype) {
  constexpr const char* kOp = "ops::Cast";
  const Device device = CommonDevice(kOp, {x});
  CheckActivation(kOp, "x", x);
  CheckOutputDType(kOp, dtype);
  if (x.dtype() == dtype) return x;
  // CastInto writes every element: zero-filling first would be one more pass over the output.
  Tensor out = Tensor::Empty(x.shape(), dtype, device, MemoryCategory::kActivations);
  CastInto(x, &out);
  return out;
}

void CastInto(const Tensor& x, Tensor* out) {
  constexpr const char* kOp = "ops::CastInto";
  XLMR_CHECK(out != nullptr) << kOp << ": out is required";
  const Device device = CommonDevice(kOp, {x, *out});
  CheckActivation(kOp, "x", x);
  CheckActivation(kOp, "out", *out);
  CheckSameShape(kOp, "x", x, "out", *out);
  DispatchByDevice(
      kOp, device, [&] { kernels::cpu::CastInto(x, out); },
      XLMR_CUDA_KERNEL(kernels::cuda::CastInto(x, out)));
}

}  // namespace xlmr::ops
