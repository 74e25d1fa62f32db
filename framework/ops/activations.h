// Pointwise activations: exact GELU (the erf form, nn.GELU() / HF "gelu") and tanh (the
// classification head's pooler activation).
//
// Gradient convention: no parameters; input gradients are RETURNED as new kActivations
// tensors. Every output has its input's shape and dtype (f32|f16|bf16), computed in fp32 and
// rounded once.
#ifndef XLMR_FRAMEWORK_OPS_ACTIVATIONS_H_
#define XLMR_FRAMEWORK_OPS_ACTIVATIONS_H_

#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// y = 0.5 * x * (1 + erf(x / sqrt(2))).
Tensor Gelu(const Tensor& x);
// Backward needs the forward's input x. [in] dy (x's shape, f32|f16|bf16). Returns dx (x's
// dtype).
Tensor GeluBackward(const Tensor& dy, const Tensor& x);

// y = tanh(x).
Tensor Tanh(const Tensor& x);
// Backward needs the forward's OUTPUT y: dx = dy * (1 - y^2). Returns dx (y's dtype).
Tensor TanhBackward(const Tensor& dy, const Tensor& y);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_ACTIVATIONS_H_
