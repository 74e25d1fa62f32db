// CPU kernels of the pointwise activations: exact (erf) GELU and tanh.
//
// GELU uses the vectorised erf of gelu_math.h (its rounding contract is stated there).
// Called through framework/ops/activations.h, which checks shapes and dtypes. Every function
// RETURNS a new tensor of its input's dtype; values are computed in fp32 and rounded once.
#ifndef XLMR_KERNELS_CPU_ACTIVATIONS_H_
#define XLMR_KERNELS_CPU_ACTIVATIONS_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// y = 0.5 * x * (1 + erf(x / sqrt(2))).
Tensor GeluForward(const Tensor& x);
// dx = dy * (Phi(x) + x * phi(x)), Phi/phi the standard normal CDF/density; dx has x's dtype.
Tensor GeluBackward(const Tensor& dy, const Tensor& x);

// y = tanh(x).
Tensor TanhForward(const Tensor& x);
// dx = dy * (1 - y^2) from the forward's output y; dx has y's dtype.
Tensor TanhBackward(const Tensor& dy, const Tensor& y);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_ACTIVATIONS_H_
