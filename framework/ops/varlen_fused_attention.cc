#include "framework/ops/varlen_fused_attention.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/fused_attention.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/fused_attention.h"
#endif

namespace xlmr::ops {
namespace {

// Every precondition of the varlen ops but the backward's extra tensors.
void CheckVarlenOperands(const char* op, const Tensor& q, const Tensor& k, const Tensor& v,
                         const Tensor& cu_seqlens, int64_t max_seqlen, int num_heads,
                         float dropout_p, int64_t dropout_stride) {
  CheckActivation(op, "q", q);
  XLMR_CHECK(q.rank() == 2) << op << ": q must be [T, H], is " << ShapeString(q.shape());
  CheckTensor(op, "k", k, q.dtype(), q.shape());
  CheckTensor(op, "v", v, q.dtype(), q.shape());
  XLMR_CHECK(num_heads > 0 && q.dim(1) > 0 && q.dim(1) % num_heads == 0)
      << op << ": num_heads = " << num_heads << " must divide the hidden size " << q.dim(1);
  XLMR_CHECK(dropout_p >= 0.0f && dropout_p < 1.0f)
      << op << ": dropout_p = " << dropout_p << " must be in [0, 1)";
  const absl::Status valid = ValidateCuSeqlens(cu_seqlens, q.dim(0), max_seqlen);
  XLMR_CHECK(valid.ok()) << op << ": " << valid.message();
  XLMR_CHECK(dropout_stride >= max_seqlen && dropout_stride > 0)
      << op << ": dropout_stride " << dropout_stride << " must be >= max_seqlen " << max_seqlen
      << " and positive";
  XLMR_CHECK(FusedAttentionSupported(q.device(), q.dtype(), q.dim(1) / num_heads))
      << op << ": no fused kernel for head_dim " << q.dim(1) / num_heads << " in "
      << DTypeName(q.dtype()) << " on this device";
}

#ifdef XLMR_WITH_CUDA
// The CUDA kernels read the offsets on the device.
// The caller's device copy of cu_seqlens when it gave one (checked to be one), else an upload.
Tensor CuSeqlensOnDevice(const Tensor& cu_seqlens, const Tensor& given) {
  if (!given.defined()) return cu_seqlens.ToDevice(Device::kCuda, MemoryCategory::kWorkspace);
  XLMR_CHECK(given.device() == Device::kCuda && given.dtype() == DType::kI32 &&
             given.shape() == cu_seqlens.shape())
      << "cu_seqlens_on_device must be cu_seqlens' copy on the GPU, is " << ShapeString(given.shape());
  return given;
}
#endif

}  // namespace

absl::Status ValidateCuSeqlens(const Tensor& cu_seqlens, int64_t tokens, int64_t max_seqlen) {
  if (!cu_seqlens.defined() || cu_seqlens.dtype() != DType::kI32 || cu_seqlens.rank() != 1 ||
      cu_seqlens.device() != Device::kCpu) {
    return absl::InvalidArgumentError("cu_seqlens must be a 1-D i32 tensor on the CPU");
  }
  const int64_t entries = cu_seqlens.numel();
  if (entries < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("cu_seqlens has ", entries, " entries; B + 1 >= 2 needed"));
  }
  const int32_t* cu = cu_seqlens.data<int32_t>();
  if (cu[0] != 0) {
    return absl::InvalidArgumentError(absl::StrCat("cu_seqlens[0] = ", cu[0], " must be 0"));
  }
  int64_t longest = 0;
  for (int64_t b = 1; b < entries; ++b) {
    if (cu[b] < cu[b - 1]) {
      return absl::InvalidArgumentError(absl::StrCat("cu_seqlens[", b, "] = ", cu[b],
                                                     " is below cu_seqlens[", b - 1,
                                                     "] = ", cu[b - 1], " (must not decrease)"));
    }
    longest = std::max<int64_t>(longest, int64_t{cu[b]} - cu[b - 1]);
  }
  if (cu[entries - 1] != tokens) {
    return absl::InvalidArgumentError(absl::StrCat("cu_seqlens[", entries - 1, "] = ",
                                                   cu[entries - 1],
                                                   " must equal the token count ", tokens));
  }
  if (max_seqlen != longest) {
    return absl::InvalidArgumentError(absl::StrCat(
        "max_seqlen = ", max_seqlen, " but the longest sequence in cu_seqlens has ", longest,
        " tokens"));
  }
  return absl::OkStatus();
}

FusedAttentionOutput VarlenFusedAttention(const Tensor& q, const Tensor& k, const Tensor& v,
                                          const Tensor& cu_seqlens, int64_t max_seqlen,
                                          int num_heads, float dropout_p,
                                          const DropoutKey& dropout_key, int64_t dropout_stride,
                                          const Tensor& cu_seqlens_on_device) {
  constexpr const char* kOp = "ops::VarlenFusedAttention";
  const Device device = CommonDevice(kOp, {q, k, v});
  CheckVarlenOperands(kOp, q, k, v, cu_seqlens, max_seqlen, num_heads, dropout_p,
                      dropout_stride);
  FusedAttentionOutput out;
  DispatchByDevice(
      kOp, device,
      [&] {
        kernels::cpu::VarlenFusedAttentionForward(q, k, v, cu_seqlens, max_seqlen, num_heads,
                                                  dropout_p, dropout_key, dropout_stride,
                                                  &out.context, &out.logsumexp);
      },
      XLMR_CUDA_KERNEL(kernels::cuda::VarlenFusedAttentionForward(
          q, k, v, CuSeqlensOnDevice(cu_seqlens, cu_seqlens_on_device), max_seqlen, num_heads, dropout_p, dropout_key,
          dropout_stride, &out.context, &out.logsumexp)));
  return out;
}

AttentionGrads VarlenFusedAttentionBackward(const Tensor& d_context, const Tensor& q,
                                            const Tensor& k, const Tensor& v,
                                            const Tensor& context, const Tensor& logsumexp,
                                            const Tensor& cu_seqlens, int64_t max_seqlen,
                                            int num_heads, float dropout_p,
                                            const DropoutKey& dropout_key,
                                            int64_t dropout_stride,
                                            const Tensor& cu_seqlens_on_device) {
  constexpr const char* kOp = "ops::VarlenFusedAttentionBackward";
  const Device device = CommonDevice(kOp, {d_context, q, k, v, context, logsumexp});
  CheckVarlenOperands(kOp, q, k, v, cu_seqlens, max_seqlen, num_heads, dropout_p,
                      dropout_stride);
  CheckTensor(kOp, "d_context", d_context, q.dtype(), q.shape());
  CheckTensor(kOp, "context", context, q.dtype(), q.shape());
  CheckTensor(kOp, "logsumexp", logsumexp, DType::kF32, {num_heads, q.dim(0)});
  AttentionGrads grads;
  DispatchByDevice(
      kOp, device,
      [&] {
        kernels::cpu::VarlenFusedAttentionBackward(d_context, q, k, v, context, logsumexp,
                                                   cu_seqlens, max_seqlen, num_heads, dropout_p,
                                                   dropout_key, dropout_stride, &grads.dq,
                                                   &grads.dk, &grads.dv);
      },
      XLMR_CUDA_KERNEL(kernels::cuda::VarlenFusedAttentionBackward(
          d_context, q, k, v, context, logsumexp, CuSeqlensOnDevice(cu_seqlens, cu_seqlens_on_device), max_seqlen,
          num_heads, dropout_p, dropout_key, dropout_stride, &grads.dq, &grads.dk, &grads.dv)));
  return grads;
}

}  // namespace xlmr::ops
