#include "models/encoder/pooling_head.h"

#include "framework/ops/elementwise.h"
#include "framework/ops/pooling.h"
#include "framework/ops/select_token.h"

namespace xlmr::models {
namespace {

// The sequence bounds the mean reads, on the rows' device: the host's cu_seqlens on the CPU,
// the copy uploaded once per pass on a GPU.
const Tensor& CuSeqlensOnDevice(const TokenLayout& tokens) {
  return tokens.cu_seqlens_on_device.defined() ? tokens.cu_seqlens_on_device : tokens.cu_seqlens;
}

}  // namespace

Tensor PoolingHead::Forward(const Tensor& sequence, const TokenLayout& tokens, const ParameterStore&,
                            const PassContext&) {
  sequence_shape_ = sequence.shape();
  if (pooling_ == SentencePooling::kCls) {
    return tokens.packed() ? ops::SelectRows(sequence, tokens.first_rows) : ops::SelectFirstToken(sequence);
  }
  return tokens.packed() ? ops::SegmentMeanPool(sequence, CuSeqlensOnDevice(tokens))
                         : ops::MaskedMeanPool(sequence, tokens.key_mask);
}

Tensor PoolingHead::Backward(const Tensor& d_logits, const TokenLayout& tokens, ParameterStore&,
                             const PassContext&) {
  const Tensor d_embeddings = ops::Cast(d_logits, DType::kF32);
  const Shape shape = sequence_shape_;
  Clear();
  if (pooling_ == SentencePooling::kCls) {
    return tokens.packed() ? ops::SelectRowsBackward(d_embeddings, tokens.first_rows, shape[0])
                           : ops::SelectFirstTokenBackward(d_embeddings, shape);
  }
  return tokens.packed() ? ops::SegmentMeanPoolBackward(d_embeddings, CuSeqlensOnDevice(tokens), shape[0])
                         : ops::MaskedMeanPoolBackward(d_embeddings, tokens.key_mask);
}

}  // namespace xlmr::models
