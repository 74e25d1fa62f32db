// The sentence-embedding "head": sentence-transformers' Pooling module on the encoder output
// (the base model's last_hidden_state), with no parameters. Mean pooling averages each sequence's
// real tokens (ops::MaskedMeanPool, or ops::SegmentMeanPool over packed rows); cls pooling takes
// its first token (<s> / [CLS]). The embeddings come out in fp32, as sentence-transformers'
// Pooling gives them from the fp32 LayerNorm output, whatever the autocast dtype.
// No dropout (sentence-transformers' Pooling has none).
#ifndef XLMR_MODELS_ENCODER_POOLING_HEAD_H_
#define XLMR_MODELS_ENCODER_POOLING_HEAD_H_

#include "models/encoder/task_head.h"

namespace xlmr::models {

class PoolingHead final : public TaskHead {
 public:
  explicit PoolingHead(SentencePooling pooling) : pooling_(pooling) {}

  // Returns the embeddings [B, H] f32 (one per sequence, padded or packed).
  Tensor Forward(const Tensor& sequence, const TokenLayout& tokens, const ParameterStore& store,
                 const PassContext& context) override;
  // [in] d_logits [B, H]: the embeddings' gradient (any float dtype). Returns d_sequence.
  Tensor Backward(const Tensor& d_logits, const TokenLayout& tokens, ParameterStore& store,
                  const PassContext& context) override;
  void Clear() override { sequence_shape_.clear(); }

 private:
  SentencePooling pooling_;
  Shape sequence_shape_;  // the forward's input shape, for the backward
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_POOLING_HEAD_H_
