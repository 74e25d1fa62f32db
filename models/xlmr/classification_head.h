// HF XLMRobertaClassificationHead on the first token (<s>):
//   dropout -> dense (H->H) -> tanh -> dropout -> out_proj (H->num_labels).
// Dropout probability: classifier_dropout when set, else hidden_dropout_prob.
#ifndef XLMR_MODELS_XLMR_CLASSIFICATION_HEAD_H_
#define XLMR_MODELS_XLMR_CLASSIFICATION_HEAD_H_

#include "framework/tensor/parameter_store.h"
#include "framework/tensor/tensor.h"
#include "models/xlmr/config.h"
#include "models/xlmr/parameter_layout.h"
#include "models/xlmr/pass_context.h"

namespace xlmr::models {

struct HeadSaved {
  Shape sequence_shape;  // [B,S,H] of the encoder output
  Tensor pooled_mm;      // [B,H] mm: dropout(first token), what dense reads
  Tensor hidden;         // [B,H] mm: tanh output
  Tensor hidden_dropped; // [B,H] mm: what out_proj reads
  void Clear() { *this = HeadSaved(); }
};

class ClassificationHead {
 public:
  ClassificationHead(const XlmrConfig& config, const HeadParams& params, uint32_t layer)
      : config_(config), params_(params), layer_(layer) {}

  // [in] sequence [B,S,H] f32. Returns logits [B,num_labels] in the matmul dtype.
  Tensor Forward(const Tensor& sequence, const ParameterStore& store, const PassContext& context,
                 HeadSaved* saved) const;
  // [in] d_logits [B,num_labels]. Returns d_sequence [B,S,H] f32 (zero except token 0).
  Tensor Backward(const Tensor& d_logits, const HeadSaved& saved, ParameterStore& store,
                  const PassContext& context) const;

 private:
  float DropoutProbability(const PassContext& context) const;

  const XlmrConfig& config_;
  HeadParams params_;
  uint32_t layer_;  // the DropoutKey layer of the head's two dropouts
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_XLMR_CLASSIFICATION_HEAD_H_
