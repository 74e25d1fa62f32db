// CUDA kernels of fused (FlashAttention-2-style) masked multi-head self-attention: the numerics
// stated in framework/ops/fused_attention.h, the GPU twin of kernels/cpu/fused_attention.h
// (tested against it in tests/gpu/fused_attention_test.cc). head_dim 64 only (XLM-R base and
// large); f16 (tensor-core MMA, fp32 accumulation) and f32. No bf16 kernel: under --bf16
// ops::FusedAttentionSupported is false on CUDA and the model runs eager attention.
//
// Called through ops::FusedAttention / ops::FusedAttentionBackward, which check the shapes and
// dtypes; these kernels assume them. All work is queued on
// CudaContext::Current().compute_stream() (asynchronous).
// Gradient convention: no parameters; dq, dk, dv are RETURNED (new tensors, `=`).
//
// Two forms, one set of kernels: padded ([B,S,H] and a key mask) and packed (varlen: [T,H] and
// cu_seqlens, no token attending outside its sequence); each CTA narrows the problem to its
// (sequence, head) pair first (fused_attention_tile.cuh), so a packed sequence takes the same
// tiles as that sequence padded. Dropout's mask index: kernels/common/attention_dropout_index.h
// with `dropout_stride`, as on the CPU.
//
// Implementation (fused_attention.cu, fused_attention_{f16,f32}.cuh): CTAs of 4 warps per
// ((batch, head), 64-row tile). The backward is deterministic: D_i first, then one kernel per
// key tile for dK/dV and one per query tile for dQ, so every output element has a single writer
// and a fixed summation order (no atomics; bit-identical reruns), at the cost of computing the
// scores and dP twice. Workspace: D, [B, heads, S] f32; nothing of size S x S.
//
// Speed, to look at once a GPU has run them (a review's reading of the code and of ptxas, not a
// measurement; do not tune blind): the f16 backward kernels use 223-250 registers (2 CTAs of 4
// warps per SM), the dropout mask is regenerated in all three kernels (forward, dK/dV, dQ), and
// __half2 stores are spread over 8 rows per warp store. bench/gpu_bench.sh measures the whole step.
#ifndef XLMR_KERNELS_CUDA_FUSED_ATTENTION_H_
#define XLMR_KERNELS_CUDA_FUSED_ATTENTION_H_

#include <cstdint>

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// The head size the CUDA kernels are compiled for.
inline constexpr int64_t kFusedAttentionHeadDim = 64;

// Whether the current device (CudaContext::Current()) gives a block the shared memory every
// `dtype` kernel asks for (fused_attention_shared_memory.h); ops::FusedAttentionSupported offers
// fused attention on CUDA only then.
bool FusedAttentionFitsCurrentDevice(DType dtype);

// [in] q, k, v [B,S,H] f32|f16 (one dtype; no bf16 kernel: framework/ops' FusedAttentionSupported
// sends bf16 to eager attention), Device::kCuda, H / num_heads == kFusedAttentionHeadDim;
// key_mask [B,S] i32 on the device (nonzero = real token).
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

// [in] q, k, v [T,H] f32|f16 on the device, H / num_heads == kFusedAttentionHeadDim; cu_seqlens
// [B+1] i32 ON THE DEVICE (0, ..., T, non-decreasing: ops::VarlenFusedAttention checks its host
// copy); max_seqlen its longest sequence (sizes the grid).
// [out] context: set to a new [T,H] tensor of q's dtype; logsumexp: set to a new [heads,T] f32.
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

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_FUSED_ATTENTION_H_
