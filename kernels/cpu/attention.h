// CPU kernels of masked multi-head self-attention (the part of Hugging Face's eager
// XLMRobertaSelfAttention after the Q/K/V projections), one OpenBLAS sgemm per (batch, head).
// The (batch, head) pairs run on the CPU threads (parallel.h) when OpenBLAS computes their GEMMs
// single-threaded (S * S * head_dim <= 2^18); otherwise one after another with OpenBLAS
// threading each GEMM. Either way every head is computed exactly as on its own.
//
// Called through ops::Attention / ops::AttentionBackward (framework/ops/attention.h), which
// check the shapes and dtypes documented there and state the numerics; these kernels assume
// them. B = batch, S = sequence length, H = hidden size = heads * head_dim.
// Gradient convention: no parameters; dq, dk, dv are RETURNED (new tensors, `=`).
#ifndef XLMR_KERNELS_CPU_ATTENTION_H_
#define XLMR_KERNELS_CPU_ATTENTION_H_

#include <cstdint>

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// [in] q, k, v [B,S,H] f32|f16|bf16 (one dtype); key_mask [B,S] i32 (nonzero = real token).
// [out] context: set to a new [B,S,H] tensor of q's dtype; probs: set to a new [B,heads,S,S]
// f32 tensor holding the softmax before dropout. Dropout's mask index is
// kernels/common/attention_dropout_index.h's with `dropout_stride` (>= S).
void AttentionForward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_mask,
                      int num_heads, float dropout_p, const DropoutKey& dropout_key,
                      int64_t dropout_stride, Tensor* context, Tensor* probs);

// [in] d_context [B,S,H] (q's dtype); q, k, v as in the forward; probs from it (the padding
// is already in probs as exact zeros, so the key mask is not needed again).
// [out] dq, dk, dv: set to new [B,S,H] tensors of q's dtype.
void AttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k, const Tensor& v,
                       const Tensor& probs, int num_heads, float dropout_p,
                       const DropoutKey& dropout_key, int64_t dropout_stride, Tensor* dq,
                       Tensor* dk, Tensor* dv);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_ATTENTION_H_
