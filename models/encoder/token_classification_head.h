// HF XLMRobertaForTokenClassification's head on every token:
//   dropout (classifier_dropout, else hidden_dropout_prob) -> classifier (H -> num_labels).
// Under autocast the dropout runs on the fp32 encoder output and the Linear reads its
// matmul-dtype copy, as torch.autocast casts F.linear's input.
#ifndef XLMR_MODELS_ENCODER_TOKEN_CLASSIFICATION_HEAD_H_
#define XLMR_MODELS_ENCODER_TOKEN_CLASSIFICATION_HEAD_H_

#include "models/encoder/task_head.h"

namespace xlmr::models {

class TokenClassificationHead final : public TaskHead {
 public:
  TokenClassificationHead(const EncoderConfig& config, const TokenHeadParams& params, uint32_t layer)
      : config_(config), params_(params), layer_(layer) {}

  // Returns logits [B, S, num_labels] (matmul dtype).
  Tensor Forward(const Tensor& sequence, const TokenLayout& tokens, const ParameterStore& store,
                 const PassContext& context) override;
  Tensor Backward(const Tensor& d_logits, const TokenLayout& tokens, ParameterStore& store,
                  const PassContext& context) override;
  void Clear() override { dropped_mm_ = Tensor(); }

 private:
  const EncoderConfig& config_;
  TokenHeadParams params_;
  uint32_t layer_;      // the DropoutKey layer of the head's dropout
  Tensor dropped_mm_;   // [B,S,H] mm: dropout(sequence), what the classifier reads
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_TOKEN_CLASSIFICATION_HEAD_H_
