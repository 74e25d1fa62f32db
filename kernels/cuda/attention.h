// CUDA kernels of masked multi-head self-attention (the part of Hugging Face's eager
// XLMRobertaSelfAttention after the Q/K/V projections): the GPU twin of
// kernels/cpu/attention.h, with the same contract and the same f16/bf16 rounding points.
//
// Called through ops::Attention / ops::AttentionBackward (framework/ops/attention.h), which
// check the shapes and dtypes documented there and state the numerics; these kernels assume
// them. B = batch, S = sequence length, H = hidden size = heads * head_dim.
//
// Products: q, k, v (and d_context) are copied to head-major [B, heads, S, D] (D = head_dim)
// so that every product is one GemmStridedBatched call (kernels/cuda/gemm.h: cuBLASLt, fp32
// accumulation, no TF32, one rounding to the output dtype) over all B * heads matrices:
// 2 in the forward (q k^T, P v), 4 in the backward (d_context v^T, P^T d_context, dS k,
// dS^T q). Results are copied back to [B, S, H]. One fused kernel per row of scores does the
// elementwise steps between them (scale and its roundings, key bias, softmax, dropout, cast).
// The dropout mask is the Philox mask of framework/random/philox.h, element index
// kernels/common/attention_dropout_index.h's with `dropout_stride` (>= S; with S: the flat index
// into [B, heads, S, S]): bit for bit the CPU mask. Results differ from the CPU backend only by
// the GEMMs' and the softmax reductions' summation order.
//
// Workspace (MemoryCategory::kWorkspace), beyond the results: at most two head-major copies
// (2 * B * S * H elements of q's dtype) at any time, and [B, heads, S, S] tensors in q's dtype:
// forward, the dropped probabilities (none for f32 without dropout: P v reads probs); backward,
// d_scores and the dropped probabilities (again none for f32 without dropout). So with f16 or
// bf16 inputs the only fp32 [B, heads, S, S] tensor is probs.
// All work is queued on CudaContext::Current().compute_stream() (asynchronous).
// Gradient convention: no parameters; dq, dk, dv are RETURNED (new tensors, `=`).
#ifndef XLMR_KERNELS_CUDA_ATTENTION_H_
#define XLMR_KERNELS_CUDA_ATTENTION_H_

#include <cstdint>

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// [in] q, k, v [B,S,H] f32|f16|bf16 (one dtype), Device::kCuda; key_mask [B,S] i32 on the
// device (nonzero = real token).
// [out] context: set to a new [B,S,H] tensor of q's dtype; probs: set to a new [B,heads,S,S]
// f32 tensor holding the softmax before dropout (padding keys exactly 0).
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

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_ATTENTION_H_
