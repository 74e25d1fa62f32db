// The task head on top of the encoder: logits from the encoder output, and their gradient back
// to it. One implementation per Hugging Face head class (EncoderConfig::task):
//   ClassificationHead       sequence classification and regression (classification_head.h)
//   TokenClassificationHead  token classification (token_classification_head.h)
//   QuestionAnsweringHead    question answering (question_answering_head.h)
//   PoolingHead              sentence embedding: sentence-transformers' Pooling (pooling_head.h)
// A head keeps what its backward needs between Forward and Backward; Clear() drops it.
#ifndef XLMR_MODELS_ENCODER_TASK_HEAD_H_
#define XLMR_MODELS_ENCODER_TASK_HEAD_H_

#include <cstdint>
#include <memory>

#include "framework/tensor/parameter_store.h"
#include "framework/tensor/tensor.h"
#include "framework/train/objective.h"
#include "models/encoder/config.h"
#include "models/encoder/parameter_layout.h"
#include "models/encoder/pass_context.h"
#include "models/encoder/token_layout.h"

namespace xlmr::models {

class TaskHead {
 public:
  virtual ~TaskHead() = default;

  // [in] sequence [B,S,H] f32, the encoder output; tokens: the pass's layout (a per-token
  // dropout draws its mask at the tokens' slots). Returns logits in the matmul dtype:
  // [B, num_labels] for a sequence head, [B, S, num_labels] for a token head, [2, B, S] (start
  // logits, then end logits) for the question-answering head; the pooling head returns the
  // embeddings [B, H] in f32. Keeps what Backward reads.
  virtual Tensor Forward(const Tensor& sequence, const TokenLayout& tokens,
                         const ParameterStore& store, const PassContext& context) = 0;
  // [in] d_logits, shaped as the logits (any float dtype). Accumulates the head's parameter
  // gradients (+=) and returns d_sequence [B,S,H] f32. Drops what Forward kept.
  virtual Tensor Backward(const Tensor& d_logits, const TokenLayout& tokens,
                          ParameterStore& store, const PassContext& context) = 0;
  virtual void Clear() = 0;
};

// The head of `config.task` over `layout`'s head parameters. `layer` is the DropoutKey layer
// of the head's dropouts. `config` must outlive the head.
std::unique_ptr<TaskHead> MakeTaskHead(const EncoderConfig& config, const ParameterLayout& layout,
                                       uint32_t layer);

// The loss (and metrics) the task trains with: kSingleLabel, kRegression, kPerToken,
// kSpanStartEnd or kInBatchNegatives.
train::Objective ObjectiveOf(Task task);

// HF's dropout before every classifier layer: classifier_dropout when set, else
// hidden_dropout_prob; 0 outside training.
float HeadDropoutProbability(const EncoderConfig& config, const PassContext& context);

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_TASK_HEAD_H_
