#include "framework/ops/activations.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/activations.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/activations.h"
#endif

namespace xlmr::ops {
namespace {

// dy and the saved tensor are same-shape activations.
void CheckPointwiseBackward(const char* op, const Tensor& dy, const char* saved_name,
                            const Tensor& saved) {
  CheckActivation(op, "dy", dy);
  CheckActivation(op, saved_name, saved);
  CheckSameShape(op, "dy", dy, saved_name, saved);
}

}  // namespace

Tensor Gelu(const Tensor& x) {
  constexpr const char* kOp = "ops::Gelu";
  const Device device = CommonDevice(kOp, {x});
  CheckActivation(kOp, "x", x);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::GeluForward(x); },
      XLMR_CUDA_KERNEL(kernels::cuda::GeluForward(x)));
}

Tensor GeluBackward(const Tensor& dy, const Tensor& x) {
  constexpr const char* kOp = "ops::GeluBackward";
  const Device device = CommonDevice(kOp, {dy, x});
  CheckPointwiseBackward(kOp, dy, "x", x);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::GeluBackward(dy, x); },
      XLMR_CUDA_KERNEL(kernels::cuda::GeluBackward(dy, x)));
}

Tensor Tanh(const Tensor& x) {
  constexpr const char* kOp = "ops::Tanh";
  const Device device = CommonDevice(kOp, {x});
  CheckActivation(kOp, "x", x);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::TanhForward(x); },
      XLMR_CUDA_KERNEL(kernels::cuda::TanhForward(x)));
}

Tensor TanhBackward(const Tensor& dy, const Tensor& y) {
  constexpr const char* kOp = "ops::TanhBackward";
  const Device device = CommonDevice(kOp, {dy, y});
  CheckPointwiseBackward(kOp, dy, "y", y);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::TanhBackward(dy, y); },
      XLMR_CUDA_KERNEL(kernels::cuda::TanhBackward(dy, y)));
}

}  // namespace xlmr::ops
