// Fused (FlashAttention-style) masked multi-head self-attention: the function of
// ops::Attention (framework/ops/attention.h: HF's XLMRobertaSelfAttention after the Q/K/V
// projections) computed tile by tile, so that the [B, heads, S, S] probabilities never exist.
// The forward keeps the context and each query row's logsumexp; the backward recomputes the
// scores from q, k, v and the logsumexp, and the dropout mask from its Philox key.
//
// B = batch, S = sequence length, H = hidden = heads * D (D = head_dim); head h uses columns
// [h * D, (h + 1) * D). dt = q's dtype (f32, f16 or bf16). Per (batch b, head h, query row i), with
// keys visited in tiles of kFusedAttentionKeyTile in order (kernels/common/fused_attention_tiles.h):
//
//   s_ij = fp32(q_i . k_j) * (1/sqrt(D)) + bias_j     q, k read exactly (any dt -> fp32 is exact);
//                                                     fp32 accumulation, NO rounding to dt;
//                                                     bias_j = 0, or finfo(f32).min for padding
//   per tile t:  m_new = max(m, max_{j in t} s_ij)    m starts at -inf
//                e_ij  = exp(s_ij - m_new)            fp32
//                alpha = exp(m - m_new)
//                l     = l * alpha + sum_{j in t} e_ij                  (undropped; fp32)
//                acc   = acc * alpha + sum_{j in t} dt(z_ij ? e_ij : 0) v_j   (fp32 accumulation)
//   context_i    = dt((acc / l) * dropout_scale)      one rounding
//   logsumexp_i  = m + log(l)                         fp32, saved for the backward
//
// z_ij is the dropout mask of ops::Attention, bit for bit: element index
// AttentionDropoutIndex(b * heads + h, stride, i, j) = ((b * heads + h) * stride + i) * stride + j
// (kernels/common/attention_dropout_index.h; the default stride is S, the flat index into
// [B, heads, S, S]), kept iff DropoutUniform(key, index) >= p, and dropout_scale
// = DropoutScale(p) (kernels/common/dropout_scale.h); p = 0 keeps everything (no RNG).
// So fused and eager attention see the same mask, and a recompute is exact.
// Padding keys get probability exactly 0. A row whose keys are all padding (a sequence with no
// real token) has all its scores equal to finfo.min (q.k is absorbed), so the kernels use the
// equal scores s_ij = 0 instead: the same uniform softmax as eager and HF, and a logsumexp of
// log(S) that fp32 can hold (finfo.min + log(S) rounds back to finfo.min, which would break the
// backward's P = exp(s - logsumexp)). Versus eager attention the differences are rounding only: in fp32 the
// summation order of the softmax (tile by tile) and of the products; in f16 and bf16 also the
// places where dt roundings happen (eager rounds the scores to dt; fused rounds e_ij instead, as
// FlashAttention does).
//
// Backward, per row i and key j (the same s_ij, z_ij), D_i = sum_d fp32(dcontext_id * context_id)
// (fp32; context as stored, in dt):
//   P_ij   = exp(s_ij - logsumexp_i)
//   dP_ij  = z_ij ? fp32(dcontext_i . v_j) * dropout_scale : 0
//   dS_ij  = P_ij * (dP_ij - D_i)
//   dv_j   = dt( sum_i dt(z_ij ? P_ij * dropout_scale : 0) dcontext_i )
//   dq_i   = dt( (sum_j dt(dS_ij) k_j) * (1/sqrt(D)) ),   dk_j = dt( (sum_i dt(dS_ij) q_i) * (1/sqrt(D)) )
// with fp32 accumulation of every sum.
//
// Which shapes have a fused kernel: FusedAttentionSupported. The CPU kernel takes any head_dim
// in f32, f16 and bf16; the CUDA kernels head_dim 64 (XLM-R base and large) in the same three
// dtypes (f16 and bf16 share one tensor-core template). Gradient convention: no
// parameters; dq, dk, dv are RETURNED (new tensors, `=`).
#ifndef XLMR_FRAMEWORK_OPS_FUSED_ATTENTION_H_
#define XLMR_FRAMEWORK_OPS_FUSED_ATTENTION_H_

#include <cstdint>

#include "framework/core/device.h"
#include "framework/ops/attention.h"
#include "framework/random/philox.h"
#include "framework/tensor/dtype.h"
#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// Whether FusedAttention has a kernel for this device, activation dtype and head size.
bool FusedAttentionSupported(Device device, DType dtype, int64_t head_dim);

struct FusedAttentionOutput {
  Tensor context;    // [B, S, H], dtype of q
  Tensor logsumexp;  // [B, heads, S] f32: each query row's log of the softmax denominator
};

// [in] q, k, v [B,S,H], one dtype f32|f16|bf16, on one device; key_mask [B,S] i32, 1 = real
// token, 0 = padding; num_heads divides H; dropout_p in [0, 1); dropout_key as for
// ops::Attention; dropout_stride as for ops::Attention (0: S). FusedAttentionSupported(device,
// dtype, H / num_heads) must hold. Returns new tensors (kActivations).
FusedAttentionOutput FusedAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& key_mask, int num_heads, float dropout_p,
                                    const DropoutKey& dropout_key, int64_t dropout_stride = 0);

// [in] d_context [B,S,H] in q's dtype; q, k, v, key_mask, num_heads, dropout_p, dropout_key and
// dropout_stride exactly as given to the forward; context and logsumexp from it.
AttentionGrads FusedAttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k,
                                      const Tensor& v, const Tensor& context,
                                      const Tensor& logsumexp, const Tensor& key_mask,
                                      int num_heads, float dropout_p,
                                      const DropoutKey& dropout_key, int64_t dropout_stride = 0);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_FUSED_ATTENTION_H_
