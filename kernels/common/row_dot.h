// The arithmetic of row dot products (framework/ops/row_dot.h), written once for the CPU kernel
// and the CUDA kernel (__host__ __device__ under nvcc) so that both round alike: a float sum in
// column order, one IEEE operation at a time, through kernels/common/row_normalize.h's Multiply
// and Plus (round-to-nearest intrinsics on the device, which nvcc never fuses into a
// multiply-add; the CPU kernel is built with -ffp-contract=off, kernels/cpu/BUILD).
#ifndef XLMR_KERNELS_COMMON_ROW_DOT_H_
#define XLMR_KERNELS_COMMON_ROW_DOT_H_

#include <cstdint>

#include "kernels/common/host_device.h"
#include "kernels/common/row_normalize.h"

namespace xlmr::kernels {

// sum over j of a[j] * b[j], each product rounded, then added in column order.
XLMR_HOST_DEVICE inline float RowDot(const float* a, const float* b, int64_t width) {
  float sum = 0.0f;
  for (int64_t j = 0; j < width; ++j) {
    sum = Plus(sum, Multiply(a[j], b[j]));
  }
  return sum;
}

// One element of a row dot product's gradient: d dot / d a[j] = b[j] (and the other way round),
// times the dot's incoming gradient. A single rounded product, so any thread layout gives the
// same bits.
XLMR_HOST_DEVICE inline float RowDotGradient(float d_dot, float other_side) {
  return Multiply(d_dot, other_side);
}

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_ROW_DOT_H_
