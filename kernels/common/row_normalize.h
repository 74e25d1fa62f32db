// The arithmetic of row normalisation (framework/ops/row_normalize.h), written once for the CPU
// kernel and the CUDA kernel (__host__ __device__ under nvcc) so that both round alike: float
// sums in column order, one IEEE operation at a time. Products and sums go through Multiply and
// Plus, which the device compiles as the round-to-nearest intrinsics nvcc never fuses into a
// multiply-add; the CPU kernel is built with -ffp-contract=off (kernels/cpu/BUILD).
#ifndef XLMR_KERNELS_COMMON_ROW_NORMALIZE_H_
#define XLMR_KERNELS_COMMON_ROW_NORMALIZE_H_

#include <cmath>
#include <cstdint>

#include "kernels/common/host_device.h"

namespace xlmr::kernels {

XLMR_HOST_DEVICE inline float Multiply(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

XLMR_HOST_DEVICE inline float Plus(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

// max(sqrt(sum of x[j]^2), eps): F.normalize's denominator (norm.clamp_min(eps)).
XLMR_HOST_DEVICE inline float RowNormDenominator(const float* x, int64_t width, float eps) {
  float squares = 0.0f;
  for (int64_t j = 0; j < width; ++j) {
    squares = Plus(squares, Multiply(x[j], x[j]));
  }
  const float norm = sqrtf(squares);
  return norm > eps ? norm : eps;
}

// y[j] = (x[j] / denominator) * multiplier.
XLMR_HOST_DEVICE inline void NormalizeRow(const float* x, int64_t width, float multiplier, float eps,
                                          float* y) {
  const float denominator = RowNormDenominator(x, width, eps);
  for (int64_t j = 0; j < width; ++j) {
    y[j] = Multiply(x[j] / denominator, multiplier);
  }
}

// The gradient of NormalizeRow. With u = x / d and g = dy * multiplier:
//   d >  eps (d is the norm): dx = (g - u * (u . g)) / d;
//   d == eps (the clamp holds, no gradient through the norm): dx = g / d.
XLMR_HOST_DEVICE inline void NormalizeRowBackward(const float* dy, const float* x, int64_t width,
                                                  float multiplier, float eps, float* dx) {
  const float denominator = RowNormDenominator(x, width, eps);
  const bool clamped = !(denominator > eps);
  float projection = 0.0f;
  if (!clamped) {
    for (int64_t j = 0; j < width; ++j) {
      projection = Plus(projection, Multiply(x[j] / denominator, Multiply(dy[j], multiplier)));
    }
  }
  for (int64_t j = 0; j < width; ++j) {
    const float g = Multiply(dy[j], multiplier);
    const float along = clamped ? 0.0f : Multiply(x[j] / denominator, projection);
    dx[j] = Plus(g, -along) / denominator;
  }
}

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_ROW_NORMALIZE_H_
