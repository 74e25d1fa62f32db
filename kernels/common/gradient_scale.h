// The factor a loss's backward multiplies its gradient by (the loss scale over the global
// batch's loss terms), as the loss kernels of both backends take it: a float given when the
// backward is queued, or a double in the tensor memory of the backend that runs the kernel,
// read when the kernel runs. The second form is how a training step passes the scale its
// device decided (kernels/common/step_state.h's gradient-scale slot) without the host waiting
// to learn it (issue 38: no host round trip inside a step).
#ifndef XLMR_KERNELS_COMMON_GRADIENT_SCALE_H_
#define XLMR_KERNELS_COMMON_GRADIENT_SCALE_H_

#include "kernels/common/host_device.h"

namespace xlmr::kernels {

struct GradientScaleSource {
  float value = 1.0f;               // used when `stored` is null
  const double* stored = nullptr;  // memory of the running backend (host for the CPU): a float's value

  // The factor, read when the kernel runs (the stored double holds a float exactly).
  XLMR_HOST_DEVICE float Resolve() const { return stored != nullptr ? static_cast<float>(*stored) : value; }
};

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_GRADIENT_SCALE_H_
