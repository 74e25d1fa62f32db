// Fused attention over a packed (padding-free, variable-length) batch: B sequences of different
// lengths stored back to back as T real tokens, no token attending outside its own sequence.
// The function of ops::FusedAttention (framework/ops/fused_attention.h: the same numerics, key
// tiles and dropout mask) applied to each sequence on its own, without padding.
//
// Layout: q, k, v and the context are [T, H]; sequence b is rows [cu_seqlens[b],
// cu_seqlens[b+1]) (FlashAttention's varlen convention). The logsumexp is [heads, T] f32: row
// h * T + t is token t's query row of head h.
//
// Same function and steps as the padded form: for a sequence of n tokens, the packed outputs,
// logsumexp and dq, dk, dv of its rows are those of its first n rows in the padded form
// (ops::FusedAttention with the same dropout_stride, padding keys masked, and zero d_context on
// padding rows): the same key tiles in the same order, the same dropout mask, and padding adds
// only exact zeros. They are not bit-equal on the CPU, only to a few ulps (f32: 4.5e-7 of the
// largest element, measured): OpenBLAS sums a narrower tile product in another order
// (tests/framework/ops/varlen_fused_attention_test.cc states the bounds). Within a packed batch,
// a sequence's results do not depend on the other sequences at all, bit for bit.
//
// Dropout: mask element (sequence b, head h, query i, key j) has Philox index
// AttentionDropoutIndex(b * heads + h, dropout_stride, i, j) (kernels/common/
// attention_dropout_index.h), i and j counted from the sequence's first token. b is the
// sequence's place in the micro-batch, so the padded and packed forms of one batch draw the same
// mask when given the same stride; the stride is fixed by the caller (e.g. the longest sequence
// the model takes), never the batch's padded length (docs/DECISIONS.md).
//
// Devices: as FusedAttentionSupported (framework/ops/fused_attention.h): the CPU for any head
// size in f32, f16 and bf16; CUDA for head_dim 64 in the same three. cu_seqlens is always a CPU
// tensor (the op checks it on the host). The CUDA kernels read a device copy: the caller's
// `cu_seqlens_on_device` (the same values on q's device, made once per batch: every layer's
// forward and backward then share one upload, models/encoder/token_layout.h), else one the op
// uploads itself (a synchronous copy per call).
// Gradient convention: no parameters; dq, dk, dv are RETURNED (new tensors, `=`).
#ifndef XLMR_FRAMEWORK_OPS_VARLEN_FUSED_ATTENTION_H_
#define XLMR_FRAMEWORK_OPS_VARLEN_FUSED_ATTENTION_H_

#include <cstdint>

#include "absl/status/status.h"
#include "framework/ops/attention.h"
#include "framework/ops/fused_attention.h"
#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// OK iff cu_seqlens is a CPU i32 tensor [B + 1] (B >= 1) with cu_seqlens[0] = 0, non-decreasing
// (a sequence of 0 tokens is allowed and attends to nothing), cu_seqlens[B] = tokens, and
// max_seqlen = the longest sequence. Otherwise InvalidArgument saying which and where (e.g.
// "cu_seqlens[4] = 37 must equal the token count 38").
absl::Status ValidateCuSeqlens(const Tensor& cu_seqlens, int64_t tokens, int64_t max_seqlen);

// [in] q, k, v [T,H], one dtype f32|f16|bf16, on one device; cu_seqlens and max_seqlen as
// ValidateCuSeqlens accepts (aborts with its message otherwise); num_heads divides H;
// dropout_p in [0, 1); dropout_key as for ops::Attention; dropout_stride >= max_seqlen.
// FusedAttentionSupported(device, dtype, H / num_heads) must hold.
// Returns new tensors (kActivations): context [T,H] (q's dtype), logsumexp [heads,T] f32.
FusedAttentionOutput VarlenFusedAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                                          const Tensor& cu_seqlens, int64_t max_seqlen,
                                          int num_heads, float dropout_p,
                                          const DropoutKey& dropout_key, int64_t dropout_stride,
                                          const Tensor& cu_seqlens_on_device = Tensor());

// [in] d_context [T,H] in q's dtype; q, k, v, cu_seqlens, max_seqlen, num_heads, dropout_p,
// dropout_key and dropout_stride exactly as given to the forward; context and logsumexp from it.
// The scores and the dropout mask are recomputed (nothing of size S x S is kept).
AttentionGrads VarlenFusedAttentionBackward(const Tensor& d_context, const Tensor& q,
                                            const Tensor& k, const Tensor& v,
                                            const Tensor& context, const Tensor& logsumexp,
                                            const Tensor& cu_seqlens, int64_t max_seqlen,
                                            int num_heads, float dropout_p,
                                            const DropoutKey& dropout_key,
                                            int64_t dropout_stride,
                                            const Tensor& cu_seqlens_on_device = Tensor());

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_VARLEN_FUSED_ATTENTION_H_
