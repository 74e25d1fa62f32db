#include "framework/ops/attention.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/attention.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/attention.h"
#endif

namespace xlmr::ops {

void CheckAttentionOperands(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
                            const Tensor& key_mask, int num_heads, float dropout_p) {
  CheckActivation(op, "q", q);
  XLMR_CHECK(q.rank() == 3) << op << ": q must be [B, S, H], is " << ShapeString(q.shape());
  CheckTensor(op, "k", k, q.dtype(), q.shape());
  CheckTensor(op, "v", v, q.dtype(), q.shape());
  CheckTensor(op, "key_mask", key_mask, DType::kI32, {q.dim(0), q.dim(1)});
  XLMR_CHECK(num_heads > 0 && q.dim(2) > 0 && q.dim(2) % num_heads == 0)
      << op << ": num_heads = " << num_heads << " must divide the hidden size " << q.dim(2);
  XLMR_CHECK(dropout_p >= 0.0f && dropout_p < 1.0f)
      << op << ": dropout_p = " << dropout_p << " must be in [0, 1)";
}

int64_t AttentionDropoutStride(const char* op, int64_t requested, int64_t seq) {
  if (requested == 0) return seq;
  XLMR_CHECK(requested >= seq) << op << ": dropout_stride " << requested
                               << " is shorter than the sequences (" << seq << " tokens)";
  return requested;
}

AttentionOutput Attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_mask,
                          int num_heads, float dropout_p, const DropoutKey& dropout_key,
                          int64_t dropout_stride) {
  constexpr const char* kOp = "ops::Attention";
  const Device device = CommonDevice(kOp, {q, k, v, key_mask});
  CheckAttentionOperands(kOp, q, k, v, key_mask, num_heads, dropout_p);
  const int64_t stride = AttentionDropoutStride(kOp, dropout_stride, q.dim(1));
  AttentionOutput out;
  DispatchByDevice(
      kOp, device,
      [&] {
        kernels::cpu::AttentionForward(q, k, v, key_mask, num_heads, dropout_p, dropout_key,
                                       stride, &out.context, &out.probs);
      },
      XLMR_CUDA_KERNEL(kernels::cuda::AttentionForward(q, k, v, key_mask, num_heads, dropout_p,
                                                       dropout_key, stride, &out.context,
                                                       &out.probs)));
  return out;
}

AttentionGrads AttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k,
                                 const Tensor& v, const Tensor& probs, const Tensor& key_mask,
                                 int num_heads, float dropout_p, const DropoutKey& dropout_key,
                                 int64_t dropout_stride) {
  constexpr const char* kOp = "ops::AttentionBackward";
  const Device device = CommonDevice(kOp, {d_context, q, k, v, probs, key_mask});
  CheckAttentionOperands(kOp, q, k, v, key_mask, num_heads, dropout_p);
  const int64_t stride = AttentionDropoutStride(kOp, dropout_stride, q.dim(1));
  CheckTensor(kOp, "d_context", d_context, q.dtype(), q.shape());
  CheckTensor(kOp, "probs", probs, DType::kF32, {q.dim(0), num_heads, q.dim(1), q.dim(1)});
  AttentionGrads grads;
  DispatchByDevice(
      kOp, device,
      [&] {
        kernels::cpu::AttentionBackward(d_context, q, k, v, probs, num_heads, dropout_p,
                                        dropout_key, stride, &grads.dq, &grads.dk, &grads.dv);
      },
      XLMR_CUDA_KERNEL(kernels::cuda::AttentionBackward(d_context, q, k, v, probs, num_heads,
                                                        dropout_p, dropout_key, stride, &grads.dq,
                                                        &grads.dk, &grads.dv)));
  return grads;
}

}  // namespace xlmr::ops
