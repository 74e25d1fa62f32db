// The target weights of a smoothed cross-entropy's gradient (HF's LabelSmoother), shared by the
// CPU kernel (kernels/cpu/loss.cc) and the CUDA kernel (kernels/cuda/loss.cu), which must agree
// bit for bit (the CUDA kernel computes them on the device when the scale is read there). With label smoothing e, C classes and the
// backward's scale, a row's gradient is
//   d_j = scale * softmax_j - uniform - (j == label ? one_hot : 0)
// (the targets sum to scale, so it sums to 0). Without smoothing uniform is 0 and one_hot is
// scale: the plain cross-entropy gradient, bit for bit.
#ifndef XLMR_KERNELS_COMMON_LABEL_SMOOTHING_H_
#define XLMR_KERNELS_COMMON_LABEL_SMOOTHING_H_

#include <cstdint>

#include "kernels/common/host_device.h"

namespace xlmr::kernels {

struct SmoothedTargetWeights {
  float uniform;  // scale * e / C, on every class
  float one_hot;  // scale * (1 - e), on the label
};

XLMR_HOST_DEVICE inline SmoothedTargetWeights SmoothedTargets(float scale, float label_smoothing, int64_t classes) {
  return {scale * label_smoothing / static_cast<float>(classes), scale * (1.0f - label_smoothing)};
}

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_LABEL_SMOOTHING_H_
