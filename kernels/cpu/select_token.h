// CPU kernels that pick the first token (<s>, the CLS position) of every sequence for the
// classification head, and scatter its gradient back. Pure data movement: bit-exact for any
// dtype. Called through framework/ops/select_token.h, which checks the shapes.
// Gradient convention: dx is RETURNED (new tensor, `=`).
#ifndef XLMR_KERNELS_CPU_SELECT_TOKEN_H_
#define XLMR_KERNELS_CPU_SELECT_TOKEN_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// [in] x [B,S,H], S >= 1. Returns [B,H] of x's dtype: x[b, 0, :].
Tensor SelectFirstToken(const Tensor& x);

// [in] dy [B,H]; x_shape = {B, S, H}. Returns dx [B,S,H] of dy's dtype: dy at token 0, zeros
// elsewhere.
Tensor SelectFirstTokenBackward(const Tensor& dy, const Shape& x_shape);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_SELECT_TOKEN_H_
