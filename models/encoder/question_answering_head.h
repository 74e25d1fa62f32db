// HF XLMRobertaForQuestionAnswering's head: one Linear `qa_outputs` (H -> 2) on every token of
// the encoder output, no dropout (HF's class has none), split into start and end logits.
//
// The logits come out as [2, B, S]: row 0 the start logits, row 1 the end logits, each
// contiguous [B, S], so that the loss (train::Objective::kSpanStartEnd) and the
// post-processing read each as plain rows. HF's qa_outputs(x) is [B, S, 2] and its
// split(1, dim=-1) gives the same two [B, S] tensors. Each half is one Linear over one row of
// qa_outputs.weight and qa_outputs.bias (views into the store), computed and differentiated
// separately, so no transpose is needed.
#ifndef XLMR_MODELS_ENCODER_QUESTION_ANSWERING_HEAD_H_
#define XLMR_MODELS_ENCODER_QUESTION_ANSWERING_HEAD_H_

#include "models/encoder/task_head.h"

namespace xlmr::models {

class QuestionAnsweringHead final : public TaskHead {
 public:
  explicit QuestionAnsweringHead(const TokenHeadParams& params) : params_(params) {}

  // Returns logits [2, B, S] (matmul dtype).
  // `tokens` must be padded (EncoderModel::TakesPackedInputs is false for this task); the head
  // has no dropout, so it reads no slots.
  Tensor Forward(const Tensor& sequence, const TokenLayout& tokens, const ParameterStore& store,
                 const PassContext& context) override;
  // [in] d_logits [2, B, S].
  Tensor Backward(const Tensor& d_logits, const TokenLayout& tokens, ParameterStore& store,
                  const PassContext& context) override;
  void Clear() override { sequence_mm_ = Tensor(); }

 private:
  TokenHeadParams params_;
  Tensor sequence_mm_;  // [B,S,H] mm: what qa_outputs reads
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_QUESTION_ANSWERING_HEAD_H_
