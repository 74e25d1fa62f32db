// Evaluation of extractive question answering, as run_qa.py evaluates: forward over every window
// (each rank a contiguous slice of the windows, in batches, no dropout, the run's precision),
// the start and end logits of each window's own tokens gathered on every rank, run_qa's
// post-processing per example (qa_postprocessing.h), and the SQuAD scores under evaluate's
// names (squad_metrics.h): "squad" (exact_match, f1), or "squad_v2" (exact, f1, total, HasAns_*,
// NoAns_*, best_*) with version_2_with_negative, each question's no-answer probability 0 as
// run_qa passes it. Training's evaluations and xlmr_predict's question answering both run it.
//
// The loss is the mean over the windows' start and end positions of the cross-entropy over the
// window's own tokens (HF's model also scores the batch's padding positions, so its value
// depends on how the windows were padded; this one does not).
#ifndef XLMR_FRAMEWORK_TRAIN_QA_EVALUATE_H_
#define XLMR_FRAMEWORK_TRAIN_QA_EVALUATE_H_

#include <vector>

#include "framework/data/qa_example_reader.h"
#include "framework/data/qa_features.h"
#include "framework/data/tokenized_dataset.h"
#include "framework/distributed/communicator.h"
#include "framework/train/evaluate.h"
#include "framework/train/model_interface.h"
#include "framework/train/qa_postprocessing.h"

namespace xlmr::train {

// What one evaluation reads: the examples, their windows, and the windows as a data set
// (data::MakeQaDataset(examples, features): windows[i] is features[i]; its span labels, when
// assigned, give the loss).
struct QaEvalData {
  const std::vector<data::QaExample>* examples = nullptr;
  const std::vector<data::QaFeature>* features = nullptr;
  const data::TokenizedDataset* windows = nullptr;
};

struct QaEvalResult {
  // loss (0 without span labels), examples, and the SQuAD figures when CanScoreQa (else none)
  EvalResult result;
  std::vector<QaPrediction> predictions;  // per example, in example order, on every rank
};

// Whether the SQuAD figures are defined for `examples`: every example came with its gold
// answers (QaExample::has_answers: data to predict may lack them) and, without
// version_2_with_negative, at least one each (SQuAD v1.1 scores answerable questions only).
bool CanScoreQa(const std::vector<data::QaExample>& examples, bool version_2_with_negative);

// Requires a model whose Forward gives [2, B, S] logits (XLMRobertaForQuestionAnswering).
// Scores the predictions only when CanScoreQa(examples); the predictions come either way.
QaEvalResult EvaluateQa(TrainableModel& model, const QaEvalData& data,
                        distributed::Communicator& comm, const EvalSettings& settings,
                        const QaPostprocessOptions& options);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_QA_EVALUATE_H_
