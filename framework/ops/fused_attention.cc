#include "framework/ops/fused_attention.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/fused_attention.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/fused_attention.h"
#endif

namespace xlmr::ops {
namespace {

// The eager op's preconditions, and a fused kernel for the device, dtype and head size.
void CheckFusedAttentionOperands(const char* op, const Tensor& q, const Tensor& k,
                                 const Tensor& v, const Tensor& key_mask, int num_heads,
                                 float dropout_p) {
  CheckAttentionOperands(op, q, k, v, key_mask, num_heads, dropout_p);
  XLMR_CHECK(FusedAttentionSupported(q.device(), q.dtype(), q.dim(2) / num_heads))
      << op << ": no fused kernel for head_dim " << q.dim(2) / num_heads << " in "
      << DTypeName(q.dtype()) << " on this device";
}

}  // namespace

bool FusedAttentionSupported(Device device, DType dtype, int64_t head_dim) {
  const bool float_activation = IsFloating(dtype);
  switch (device) {
    case Device::kCpu:
      return float_activation && head_dim > 0;
    case Device::kCuda:
#ifdef XLMR_WITH_CUDA
      // f32, f16 and bf16 kernels; a GPU whose shared memory per block is too small for the
      // kernels falls back to eager attention.
      return (dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16) &&
             head_dim == kernels::cuda::kFusedAttentionHeadDim &&
             kernels::cuda::FusedAttentionFitsCurrentDevice(dtype);
#else
      return false;
#endif
  }
  return false;
}

FusedAttentionOutput FusedAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& key_mask, int num_heads, float dropout_p,
                                    const DropoutKey& dropout_key, int64_t dropout_stride) {
  constexpr const char* kOp = "ops::FusedAttention";
  const Device device = CommonDevice(kOp, {q, k, v, key_mask});
  CheckFusedAttentionOperands(kOp, q, k, v, key_mask, num_heads, dropout_p);
  const int64_t stride = AttentionDropoutStride(kOp, dropout_stride, q.dim(1));
  FusedAttentionOutput out;
  DispatchByDevice(
      kOp, device,
      [&] {
        kernels::cpu::FusedAttentionForward(q, k, v, key_mask, num_heads, dropout_p, dropout_key,
                                            stride, &out.context, &out.logsumexp);
      },
      XLMR_CUDA_KERNEL(kernels::cuda::FusedAttentionForward(q, k, v, key_mask, num_heads,
                                                            dropout_p, dropout_key, stride,
                                                            &out.context, &out.logsumexp)));
  return out;
}

AttentionGrads FusedAttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k,
                                      const Tensor& v, const Tensor& context,
                                      const Tensor& logsumexp, const Tensor& key_mask,
                                      int num_heads, float dropout_p,
                                      const DropoutKey& dropout_key, int64_t dropout_stride) {
  constexpr const char* kOp = "ops::FusedAttentionBackward";
  const Device device = CommonDevice(kOp, {d_context, q, k, v, context, logsumexp, key_mask});
  CheckFusedAttentionOperands(kOp, q, k, v, key_mask, num_heads, dropout_p);
  const int64_t stride = AttentionDropoutStride(kOp, dropout_stride, q.dim(1));
  CheckTensor(kOp, "d_context", d_context, q.dtype(), q.shape());
  CheckTensor(kOp, "context", context, q.dtype(), q.shape());
  CheckTensor(kOp, "logsumexp", logsumexp, DType::kF32, {q.dim(0), num_heads, q.dim(1)});
  AttentionGrads grads;
  DispatchByDevice(
      kOp, device,
      [&] {
        kernels::cpu::FusedAttentionBackward(d_context, q, k, v, context, logsumexp, key_mask,
                                             num_heads, dropout_p, dropout_key, stride,
                                             &grads.dq, &grads.dk, &grads.dv);
      },
      XLMR_CUDA_KERNEL(kernels::cuda::FusedAttentionBackward(
          d_context, q, k, v, context, logsumexp, key_mask, num_heads, dropout_p, dropout_key,
          stride, &grads.dq, &grads.dk, &grads.dv)));
  return grads;
}

}  // namespace xlmr::ops
