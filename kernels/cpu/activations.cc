#include "kernels/cpu/activations.h"

#include <cmath>

#include "kernels/cpu/float_access.h"

namespace xlmr::kernels::cpu {
namespace {

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;

}  // namespace

Tensor GeluForward(const Tensor& x) {
  return MapElements(x, x.dtype(),
                     [](float v) { return 0.5f * v * (1.0f + std::erf(v * kInvSqrt2)); });
}

Tensor GeluBackward(const Tensor& dy, const Tensor& x) {
  return MapElements(dy, x, x.dtype(), [](float grad, float v) {
    const float cdf = 0.5f * (1.0f + std::erf(v * kInvSqrt2));
    const float pdf = kInvSqrt2Pi * std::exp(-0.5f * v * v);
    return grad * (cdf + v * pdf);
  });
}

Tensor TanhForward(const Tensor& x) {
  return MapElements(x, x.dtype(), [](float v) { return std::tanh(v); });
}

Tensor TanhBackward(const Tensor& dy, const Tensor& y) {
  return MapElements(dy, y, y.dtype(), [](float grad, float t) { return grad * (1.0f - t * t); });
}

}  // namespace xlmr::kernels::cpu
