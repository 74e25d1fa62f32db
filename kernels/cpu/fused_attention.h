// CPU kernels of fused (FlashAttention-style) masked multi-head self-attention: the numerics
// stated in framework/ops/fused_attention.h, computed in 64 x 64 (query x key) tiles so that no
// [S, S] matrix exists, only per-thread tiles. The oracle of the CUDA twin
// (kernels/cuda/fused_attention.h).
//
// Called through ops::FusedAttention / ops::FusedAttentionBackward, which check the shapes and
// dtypes; these kernels assume them. Any head_dim. Results are bit-identical for every thread
// count: the forward spreads (batch, head, query tile) triples over the threads, the backward
// (batch, head) pairs, and every sum stays inside one of them in a fixed order.
//
// Two forms, one implementation: padded ([B,S,H] and a key mask) and packed (varlen: [T,H] and
// cu_seqlens, no token attending outside its sequence). A sequence of the packed form takes the
// same tiles, in the same order, as that sequence padded: its outputs, logsumexp and gradients
// are the padded form's real rows (padding keys add exact zeros; padding queries add exact zeros
// to dk and dv when their d_context is zero, as the model's is), up to the summation order
// OpenBLAS picks for the narrower tile products (a few ulps). Dropout's mask
// index is kernels/common/attention_dropout_index.h's with `dropout_stride` (>= every sequence
// length; checked when dropout_p > 0).
// Gradient convention: no parameters; dq, dk, dv are RETURNED (new tensors, `=`).
#ifndef XLMR_KERNELS_CPU_FUSED_ATTENTION_H_
#define XLMR_KERNELS_CPU_FUSED_ATTENTION_H_

#include <cstdint>

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// [in] q, k, v [B,S,H] f32|f16|bf16 (one dtype); key_mask [B,S] i32 (nonzero = real token).
// [out] context: set to a new [B,S,H] tensor of q's dtype; logsumexp: set to a new
// [B,heads,S] f32 tensor.
void FusedAttentionForward(const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& key_mask, int num_heads, float dropout_p,
                           const DropoutKey& dropout_key, int64_t dropout_stride, Tensor* context,
                           Tensor* logsumexp);

// [in] d_context [B,S,H] (q's dtype); q, k, v, key_mask as in the forward; context and
// logsumexp from it. [out] dq, dk, dv: set to new [B,S,H] tensors of q's dtype.
void FusedAttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k,
                            const Tensor& v, const Tensor& context, const Tensor& logsumexp,
                            const Tensor& key_mask, int num_heads, float dropout_p,
                            const DropoutKey& dropout_key, int64_t dropout_stride, Tensor* dq,
                            Tensor* dk, Tensor* dv);

// [in] q, k, v [T,H] f32|f16|bf16 (one dtype): B sequences packed back to back; cu_seqlens
// [B+1] i32 on the CPU, cu_seqlens[0] = 0, non-decreasing, cu_seqlens[B] = T; max_seqlen = the
// longest cu_seqlens[b+1] - cu_seqlens[b] (ops::VarlenFusedAttention checks all of it).
// [out] context: set to a new [T,H] tensor of q's dtype; logsumexp: set to a new [heads,T] f32
// tensor (row h * T + t: token t's query row of head h).
void VarlenFusedAttentionForward(const Tensor& q, const Tensor& k, const Tensor& v,
                                 const Tensor& cu_seqlens, int64_t max_seqlen, int num_heads,
                                 float dropout_p, const DropoutKey& dropout_key,
                                 int64_t dropout_stride, Tensor* context, Tensor* logsumexp);

// [in] d_context [T,H] (q's dtype); the rest as in the varlen forward, context and logsumexp
// from it. [out] dq, dk, dv: set to new [T,H] tensors of q's dtype.
void VarlenFusedAttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k,
                                  const Tensor& v, const Tensor& context, const Tensor& logsumexp,
                                  const Tensor& cu_seqlens, int64_t max_seqlen, int num_heads,
                                  float dropout_p, const DropoutKey& dropout_key,
                                  int64_t dropout_stride, Tensor* dq, Tensor* dk, Tensor* dv);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_FUSED_ATTENTION_H_
