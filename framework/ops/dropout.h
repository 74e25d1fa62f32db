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

// Row-placed dropout: the mask follows each row's slot, not its place in x, so a token draws
// the same mask however its batch is laid out (padded to any length, or packed without
// padding; models/encoder/token_slots.h gives example b's position s the slot b * stride + s).
// x is read as [rows, width] (rows = row_slots.numel(), width = x.numel() / rows, the last
// dimension); element c of row r is kept iff DropoutUniform(key, row_slots[r] * width + c) >= p.
// [in] row_slots i32 [rows] on x's device, each in [0, num_slots) (checked on the CPU; on the
//      GPU the caller's promise); num_slots * width <= kMaxDropoutElements (checked).
// Returns y of x's shape and dtype; p == 0 returns x itself.
Tensor DropoutRows(const Tensor& x, float p, const DropoutKey& key, const Tensor& row_slots,
                   int64_t num_slots);
// The backward: the same masked scaling of dy with the forward's p, key and slots.
Tensor DropoutRowsBackward(const Tensor& dy, float p, const DropoutKey& key,
                           const Tensor& row_slots, int64_t num_slots);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_DROPOUT_H_
