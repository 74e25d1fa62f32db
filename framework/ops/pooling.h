// sentence-transformers' mean pooling (Pooling with pooling_mode_mean_tokens): a sentence's
// embedding is the mean of its tokens' vectors, padding excluded,
//   sum_s(x[b,s,:] * mask[b,s]) / max(sum_s mask[b,s], 1e-9),
// here a float sum in token order divided once by the token count (0 for a sequence without
// tokens, as sentence-transformers' clamp gives). The padded form reads the attention mask; the
// packed form (--padding_free) reads the sequence bounds. Same bits on every backend.
// Gradient convention: no parameters; dx is RETURNED (new f32 tensor, `=`), kActivations.
#ifndef XLMR_FRAMEWORK_OPS_POOLING_H_
#define XLMR_FRAMEWORK_OPS_POOLING_H_

#include <cstdint>

#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// [in] x [B,S,H] f32 (the encoder output); mask [B,S] i32 on x's device (1 real token, 0
// padding). Returns [B,H] f32.
Tensor MaskedMeanPool(const Tensor& x, const Tensor& mask);
// [in] dy [B,H] f32; mask as given to the forward. Returns dx [B,S,H] f32: dy[b] / count_b at
// every real token of sequence b, 0 at padding.
Tensor MaskedMeanPoolBackward(const Tensor& dy, const Tensor& mask);

// [in] x [T,H] f32; cu_seqlens [B + 1] i32 on x's device, non-decreasing from 0 to T (sequence
// b is rows [cu_seqlens[b], cu_seqlens[b + 1])). Returns [B,H] f32.
Tensor SegmentMeanPool(const Tensor& x, const Tensor& cu_seqlens);
// [in] dy [B,H] f32; cu_seqlens as given to the forward; rows = T. Returns dx [T,H] f32.
Tensor SegmentMeanPoolBackward(const Tensor& dy, const Tensor& cu_seqlens, int64_t rows);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_POOLING_H_
