// Masked multi-head self-attention: Hugging Face's eager XLMRobertaSelfAttention after the
// Q/K/V projections (and before the output projection), forward and backward.
//
// B = batch, S = sequence length, H = hidden size = num_heads * head_dim. Head h uses columns
// [h * head_dim, (h + 1) * head_dim) of H (HF's view(B, S, heads, head_dim)).
//
// Numerics, per (batch, head), the same operations and roundings as PyTorch (under autocast
// for f16 and bf16 inputs; "half" below is q's dtype when that is f16 or bf16):
//   scores  = q_h k_h^T                 fp32 accumulation; half: rounded to half
//   scores *= 1/sqrt(head_dim)          half: computed in fp32, rounded to half again
//   scores += key bias                  fp32: 0 for real keys, finfo(float32).min for padding
//                                       keys (queries are never masked)
//   probs   = softmax over keys         fp32 (returned: needed by backward)
//   dropped = dropout(probs)            fp32, the mask of ops::Dropout with element index
//                                       AttentionDropoutIndex(b * heads + h, stride, i, j)
//                                       (kernels/common/attention_dropout_index.h; with the
//                                       default stride S: the flat index into [B, heads, S, S]);
//                                       cast to q's dtype
//   context = dropped v_h               fp32 accumulation, rounded once to q's dtype
// Padding keys get exactly zero probability (exp underflows to 0). A row whose keys are all
// padding softmaxes to uniform, as in HF.
//
// Gradient convention: no parameters; dq, dk, dv are RETURNED (new tensors, `=`).
#ifndef XLMR_FRAMEWORK_OPS_ATTENTION_H_
#define XLMR_FRAMEWORK_OPS_ATTENTION_H_

#include <cstdint>

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::ops {

struct AttentionOutput {
  Tensor context;  // [B, S, H], dtype of q
  Tensor probs;    // [B, heads, S, S] f32: softmax output before dropout (saved for backward)
};

// [in] q, k, v [B,S,H], one dtype f32|f16|bf16, on one device; key_mask [B,S] i32, 1 = real
// token, 0 = padding; num_heads divides H; dropout_p in [0, 1) (0 = no dropout, no RNG);
// dropout_key identifies this dropout site and micro-step (framework/random/philox.h);
// dropout_stride: the mask index's fixed stride (>= S), or 0 for S itself. A caller that wants
// the masks of the padded and packed (ops::VarlenFusedAttention) forms of one batch to agree
// passes the same fixed stride to both (docs/DECISIONS.md, "Attention dropout's mask index").
// Returns new tensors (kActivations).
AttentionOutput Attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_mask,
                          int num_heads, float dropout_p, const DropoutKey& dropout_key,
                          int64_t dropout_stride = 0);

struct AttentionGrads {
  Tensor dq, dk, dv;  // [B, S, H], dtype of q
};

// [in] d_context [B,S,H] in q's dtype; q, k, v, key_mask, num_heads, dropout_p, dropout_key and
// dropout_stride exactly as given to the forward; probs from the forward. The dropout mask is
// regenerated from the key, not stored.
// Backward of the numerics above: d(dropped) = d_context v_h^T (half: rounded), through the
// dropout mask and 1/(1-p), softmax backward dS = P * (dP - rowsum(dP * P)) in fp32, then
// (half: rounded) times 1/sqrt(head_dim) (half: rounded again), and dq = dS k_h, dk = dS^T q_h,
// dv = dropped^T d_context, each with fp32 accumulation rounded once to q's dtype.
// key_mask is checked for shape only: the CPU backend reads the padding from probs (exact
// zeros); it is in the signature for backends that recompute the scores instead.
AttentionGrads AttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k,
                                 const Tensor& v, const Tensor& probs, const Tensor& key_mask,
                                 int num_heads, float dropout_p, const DropoutKey& dropout_key,
                                 int64_t dropout_stride = 0);

// The stride an attention op's dropout mask index uses for sequences of `seq` tokens: `requested`,
// or seq when it is 0. Aborts naming `op` when requested is neither 0 nor >= seq.
int64_t AttentionDropoutStride(const char* op, int64_t requested, int64_t seq);

// The preconditions both attention ops (this one and framework/ops/fused_attention.h) check:
// q, k, v [B,S,H] of one activation dtype, key_mask [B,S] i32, num_heads dividing H, dropout_p
// in [0, 1). Aborts naming `op` otherwise.
void CheckAttentionOperands(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
                            const Tensor& key_mask, int num_heads, float dropout_p);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_ATTENTION_H_
