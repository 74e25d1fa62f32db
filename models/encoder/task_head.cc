#include "models/encoder/task_head.h"

#include "models/encoder/classification_head.h"
#include "models/encoder/pooling_head.h"
#include "models/encoder/question_answering_head.h"
#include "models/encoder/token_classification_head.h"

namespace xlmr::models {

std::unique_ptr<TaskHead> MakeTaskHead(const EncoderConfig& config, const ParameterLayout& layout,
                                       uint32_t layer) {
  if (config.task == Task::kTokenClassification) {
    return std::make_unique<TokenClassificationHead>(config, layout.token_head, layer);
  }
  if (config.task == Task::kQuestionAnswering) {
    return std::make_unique<QuestionAnsweringHead>(layout.qa_outputs);
  }
  if (config.task == Task::kSentenceEmbedding) return std::make_unique<PoolingHead>(config.pooling);
  return std::make_unique<ClassificationHead>(config, layout.head, layer);
}

train::Objective ObjectiveOf(Task task) {
  switch (task) {
    case Task::kSequenceClassification: return train::Objective::kSingleLabel;
    case Task::kRegression: return train::Objective::kRegression;
    case Task::kTokenClassification: return train::Objective::kPerToken;
    case Task::kQuestionAnswering: return train::Objective::kSpanStartEnd;
    case Task::kSentenceEmbedding: return train::Objective::kInBatchNegatives;
    case Task::kCrossEncoder: return train::Objective::kBinaryLogits;
  }
  return train::Objective::kSingleLabel;
}

float HeadDropoutProbability(const EncoderConfig& config, const PassContext& context) {
  if (!context.training) return 0.0f;
  return config.classifier_dropout.has_value() ? static_cast<float>(*config.classifier_dropout)
                                               : static_cast<float>(config.hidden_dropout_prob);
}

}  // namespace xlmr::models
