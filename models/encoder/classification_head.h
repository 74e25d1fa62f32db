// HF XLMRobertaClassificationHead on the first token (<s>), the head of
// XLMRobertaForSequenceClassification (classification and regression):
//   dropout -> dense (H->H) -> tanh -> dropout -> out_proj (H->num_labels).
// BERT's (BertPooler, then BertForSequenceClassification's dropout and classifier) is the same
// with no first dropout: dense is bert.pooler.dense, out_proj is `classifier`
// (ModelFamily::pooler, ParameterLayout).
// Dropout probability: classifier_dropout when set, else hidden_dropout_prob.
#ifndef XLMR_MODELS_ENCODER_CLASSIFICATION_HEAD_H_
#define XLMR_MODELS_ENCODER_CLASSIFICATION_HEAD_H_

#include "models/encoder/task_head.h"

namespace xlmr::models {

class ClassificationHead final : public TaskHead {
 public:
  ClassificationHead(const EncoderConfig& config, const HeadParams& params, uint32_t layer)
      : config_(config), params_(params), layer_(layer) {}

  // Returns logits [B, num_labels] (matmul dtype).
  Tensor Forward(const Tensor& sequence, const TokenLayout& tokens, const ParameterStore& store,
                 const PassContext& context) override;
  // Returns d_sequence [B,S,H] f32 (zero except token 0), or [T,H] (zero except each
  // sequence's first row) for packed tokens.
  Tensor Backward(const Tensor& d_logits, const TokenLayout& tokens, ParameterStore& store,
                  const PassContext& context) override;
  void Clear() override { saved_ = Saved(); }

 private:
  struct Saved {
    Shape sequence_shape;   // [B,S,H] of the encoder output
    Tensor pooled_mm;       // [B,H] mm: dropout(first token), what dense reads
    Tensor hidden;          // [B,H] mm: tanh output
    Tensor hidden_dropped;  // [B,H] mm: what out_proj reads
  };

  const EncoderConfig& config_;
  HeadParams params_;
  uint32_t layer_;  // the DropoutKey layer of the head's two dropouts
  Saved saved_;
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_CLASSIFICATION_HEAD_H_
