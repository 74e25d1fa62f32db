#include "models/encoder/token_layout.h"

#include "framework/core/check.h"
#include "framework/ops/dropout.h"
#include "framework/ops/varlen_fused_attention.h"

namespace xlmr::models {

TokenLayout PaddedTokenLayout(const Tensor& attention_mask, int64_t stride) {
  XLMR_CHECK(attention_mask.rank() == 2 && attention_mask.dtype() == DType::kI32)
      << "PaddedTokenLayout: attention_mask must be [B,S] i32";
  const int64_t batch = attention_mask.dim(0);
  const int64_t length = attention_mask.dim(1);
  XLMR_CHECK(length <= stride) << "PaddedTokenLayout: padded length " << length
                               << " exceeds the slot stride " << stride;
  Tensor slots = Tensor::Zeros({batch * length}, DType::kI32);
  int32_t* out = slots.data<int32_t>();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < length; ++s) out[b * length + s] = static_cast<int32_t>(b * stride + s);
  }
  TokenLayout layout;
  layout.key_mask = attention_mask;
  layout.slots = attention_mask.device() == Device::kCpu ? slots : slots.ToDevice(attention_mask.device());
  layout.batch = batch;
  layout.stride = stride;
  return layout;
}

TokenLayout PackedTokenLayout(const Tensor& cu_seqlens, int64_t max_seqlen, int64_t tokens,
                              int64_t stride, Device device) {
  const absl::Status valid = ops::ValidateCuSeqlens(cu_seqlens, tokens, max_seqlen);
  XLMR_CHECK(valid.ok()) << "PackedTokenLayout: " << valid.message();
  XLMR_CHECK(max_seqlen <= stride) << "PackedTokenLayout: longest sequence " << max_seqlen
                                   << " exceeds the slot stride " << stride;
  const int64_t batch = cu_seqlens.numel() - 1;
  const int32_t* cu = cu_seqlens.data<int32_t>();
  Tensor slots = Tensor::Zeros({tokens}, DType::kI32);
  Tensor first_rows = Tensor::Zeros({batch}, DType::kI32);
  int32_t* out = slots.data<int32_t>();
  for (int64_t b = 0; b < batch; ++b) {
    first_rows.data<int32_t>()[b] = cu[b];
    for (int32_t t = cu[b]; t < cu[b + 1]; ++t) {
      out[t] = static_cast<int32_t>(b * stride + (t - cu[b]));
    }
  }
  TokenLayout layout;
  layout.cu_seqlens = cu_seqlens;
  if (device != Device::kCpu) layout.cu_seqlens_on_device = cu_seqlens.ToDevice(device, MemoryCategory::kWorkspace);
  layout.max_seqlen = max_seqlen;
  layout.first_rows = device == Device::kCpu ? first_rows : first_rows.ToDevice(device);
  layout.slots = device == Device::kCpu ? slots : slots.ToDevice(device);
  layout.batch = batch;
  layout.stride = stride;
  return layout;
}

Tensor TokenDropout(const Tensor& x, float p, const DropoutKey& key, const TokenLayout& layout) {
  return ops::DropoutRows(x, p, key, layout.slots, layout.num_slots());
}

Tensor TokenDropoutBackward(const Tensor& dy, float p, const DropoutKey& key,
                            const TokenLayout& layout) {
  return ops::DropoutRowsBackward(dy, p, key, layout.slots, layout.num_slots());
}

}  // namespace xlmr::models
