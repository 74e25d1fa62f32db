// Token selection for the classification head: HF's XLMRobertaClassificationHead starts with
// features[:, 0, :], the hidden state of the first token (<s>) of every sequence.
//
// Pure data movement, bit-exact for every dtype.
// Gradient convention: no parameters; dx is RETURNED (new tensor, `=`), kActivations.
#ifndef XLMR_FRAMEWORK_OPS_SELECT_TOKEN_H_
#define XLMR_FRAMEWORK_OPS_SELECT_TOKEN_H_

#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// [in] x [B,S,H] f32|f16|bf16, S >= 1. Returns [B,H] of x's dtype: x[b, 0, :].
Tensor SelectFirstToken(const Tensor& x);

// [in] dy [B,H] f32|f16|bf16; x_shape: the forward input's shape {B, S, H}.
// Returns dx [B,S,H] of dy's dtype: dy at token 0, zeros at every other token.
Tensor SelectFirstTokenBackward(const Tensor& dy, const Shape& x_shape);

// The packed form (--padding_free): each sequence's first token is a row of the [T,H] tokens.
// [in] x [T,H] f32 (the encoder output); rows [B] i32 on x's device, distinct, each in [0, T).
// Returns [B,H] f32: x[rows[b], :]. The gather of ops::Embedding with x as the table, so the
// same kernels on every backend.
Tensor SelectRows(const Tensor& x, const Tensor& rows);

// [in] dy [B,H] f32; rows as given to the forward; x_rows = T. Returns dx [T,H] f32: dy[b] at
// row rows[b], zeros elsewhere (ops::EmbeddingBackward's scatter into a zero table; the rows
// are distinct, so nothing is summed).
Tensor SelectRowsBackward(const Tensor& dy, const Tensor& rows, int64_t x_rows);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_SELECT_TOKEN_H_
