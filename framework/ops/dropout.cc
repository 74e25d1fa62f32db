#include "framework/ops/dropout.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/dropout.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/dropout.h"
#endif

namespace xlmr::ops {
namespace {

// Forward and backward are the same masked scaling of their input.
Tensor MaskAndScale(const char* op, const Tensor& input, float p, const DropoutKey& key) {
  const Device device = CommonDevice(op, {input});
  CheckActivation(op, "input", input);
  XLMR_CHECK(p >= 0.0f && p < 1.0f) << op << ": p must be in [0, 1), is " << p;
  XLMR_CHECK(input.numel() <= kMaxDropoutElements)
      << op << ": " << input.numel() << " elements exceed the dropout counter range";
  if (p == 0.0f) return input;
  return DispatchByDevice(
      op, device, [&] { return kernels::cpu::DropoutApply(input, p, key); },
      XLMR_CUDA_KERNEL(kernels::cuda::DropoutApply(input, p, key)));
}

}  // namespace

Tensor Dropout(const Tensor& x, float p, const DropoutKey& key) {
  return MaskAndScale("ops::Dropout", x, p, key);
}

Tensor DropoutBackward(const Tensor& dy, float p, const DropoutKey& key) {
  return MaskAndScale("ops::DropoutBackward", dy, p, key);
}

}  // namespace xlmr::ops
