// Inverted dropout with a stateless, recomputable mask (nn.Dropout in training mode).
//
// Element i (flat row-major index into x) is kept iff DropoutUniform(key, i) >= p
// (framework/random/philox.h); kept elements are multiplied by 1 / (1 - p) in fp32 and the
// result is rounded once to x's dtype. The mask is a pure function of the key and the index:
// it is never stored, and the backward, a recompute before the backward, and the GPU backend
// all regenerate the identical mask from the same key.
//
// Gradient convention: no parameters; dx is RETURNED. p == 0 is the identity: the input
// tensor itself is returned (shared, no copy, no RNG).
#ifndef XLMR_FRAMEWORK_OPS_DROPOUT_H_
#define XLMR_FRAMEWORK_OPS_DROPOUT_H_

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// [in] x f32|f16|bf16; 0 <= p < 1; key names this dropout site and micro-step.
// Returns y of x's shape and dtype.
Tensor Dropout(const Tensor& x, float p, const DropoutKey& key);

// Backward needs only p and the forward's key (the mask is regenerated).
// [in] dy f32|f16|bf16 of the forward's shape. Returns dx = kept ? dy / (1 - p) : 0, dy's
// dtype.
Tensor DropoutBackward(const Tensor& dy, float p, const DropoutKey& key);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_DROPOUT_H_
