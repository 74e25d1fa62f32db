// What an AdamW pass over the flat fp32 buffers takes, declared once for the CPU and CUDA
// kernels (kernels/{cpu,cuda}/optim.h) and for framework/optim/adamw.h, which computes it
// (ComputeAdamWStepScalars) and states the formula the kernels evaluate with it.
#ifndef XLMR_KERNELS_COMMON_ADAMW_STEP_H_
#define XLMR_KERNELS_COMMON_ADAMW_STEP_H_

#include <cstdint>

namespace xlmr::kernels {

// The per-step constants, rounded to float exactly where torch rounds them. The kernels take
// this struct by value (the CUDA one as a kernel argument).
struct AdamWStepScalars {
  float decay_factor = 1.0f;           // float(1 - lr * weight_decay)
  float lerp_weight = 0.0f;            // float(1 - beta1)
  float beta2 = 0.0f;                  // float(beta2)
  float one_minus_beta2 = 0.0f;        // float(1 - beta2)
  float bias_correction2_sqrt = 1.0f;  // float((1 - beta2^t) ** 0.5)
  float eps = 0.0f;                    // float(eps)
  float neg_step_size = 0.0f;          // float(-(lr / (1 - beta1^t)))
};

// Elements [offset, offset + size) of the flat buffers, which all decay or all do not
// (framework/optim's AdamWSegment, as the kernels see it).
struct AdamWDecayRun {
  int64_t offset = 0;
  int64_t size = 0;
  bool decay = false;
  bool half_copy = true;  // also write the half working copy (when the pass has one)
};

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_ADAMW_STEP_H_
