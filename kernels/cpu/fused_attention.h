// CPU kernels of fused (FlashAttention-style) masked multi-head self-attention: the numerics
// stated in framework/ops/fused_attention.h, computed in 64 x 64 (query x key) tiles so that no
// [S, S] matrix exists, only per-thread tiles. The oracle of the CUDA twin
// (kernels/cuda/fused_attention.h).
//
// Called through ops::FusedAttention / ops::FusedAttentionBackward, which check the shapes and
// dtypes; these kernels assume them. Any head_dim. Results are bit-identical for every thread
// count: the forward spreads (batch, head, query tile) triples over the threads, the backward
// (batch, head) pairs, and every sum stays inside one of them in a fixed order.
// Gradient convention: no parameters; dq, dk, dv are RETURNED (new tensors, `=`).
#ifndef XLMR_KERNELS_CPU_FUSED_ATTENTION_H_
#define XLMR_KERNELS_CPU_FUSED_ATTENTION_H_

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// [in] q, k, v [B,S,H] f32|f16|bf16 (one dtype); key_mask [B,S] i32 (nonzero = real token).
// [out] context: set to a new [B,S,H] tensor of q's dtype; logsumexp: set to a new
// [B,heads,S] f32 tensor.
void FusedAttentionForward(const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& key_mask, int num_heads, float dropout_p,
                           const DropoutKey& dropout_key, Tensor* context, Tensor* logsumexp);

// [in] d_context [B,S,H] (q's dtype); q, k, v, key_mask as in the forward; context and
// logsumexp from it. [out] dq, dk, dv: set to new [B,S,H] tensors of q's dtype.
void FusedAttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k,
                            const Tensor& v, const Tensor& context, const Tensor& logsumexp,
                            const Tensor& key_mask, int num_heads, float dropout_p,
                            const DropoutKey& dropout_key, Tensor* dq, Tensor* dk, Tensor* dv);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_FUSED_ATTENTION_H_
