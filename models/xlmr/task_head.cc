#include "models/xlmr/task_head.h"

#include "models/xlmr/classification_head.h"
#include "models/xlmr/question_answering_head.h"
#include "models/xlmr/token_classification_head.h"

namespace xlmr::models {

std::unique_ptr<TaskHead> MakeTaskHead(const XlmrConfig& config, const ParameterLayout& layout,
                                       uint32_t layer) {
  if (config.task == XlmrTask::kTokenClassification) {
    return std::make_unique<TokenClassificationHead>(config, layout.token_head, layer);
  }
  if (config.task == XlmrTask::kQuestionAnswering) {
    return std::make_unique<QuestionAnsweringHead>(layout.qa_outputs);
  }
  return std::make_unique<ClassificationHead>(config, layout.head, layer);
}

train::Objective ObjectiveOf(XlmrTask task) {
  switch (task) {
    case XlmrTask::kSequenceClassification: return train::Objective::kSingleLabel;
    case XlmrTask::kRegression: return train::Objective::kRegression;
    case XlmrTask::kTokenClassification: return train::Objective::kPerToken;
    case XlmrTask::kQuestionAnswering: return train::Objective::kSpanStartEnd;
  }
  return train::Objective::kSingleLabel;
}

float HeadDropoutProbability(const XlmrConfig& config, const PassContext& context) {
  if (!context.training) return 0.0f;
  return config.classifier_dropout.has_value() ? static_cast<float>(*config.classifier_dropout)
                                               : static_cast<float>(config.hidden_dropout_prob);
}

}  // namespace xlmr::models
