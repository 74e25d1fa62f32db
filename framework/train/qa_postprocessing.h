// From start and end logits to answers, exactly as Hugging Face's run_qa.py does it
// (utils_qa.postprocess_qa_predictions): per example, over all its windows,
//   * the candidates of a window: every pair of the n_best_size highest start logits and the
//     n_best_size highest end logits whose tokens are both context tokens, end >= start and at
//     most max_answer_length tokens; score = start logit + end logit (float32, as numpy);
//   * the null candidate (SQuAD v2): the window whose <s> scores start + end lowest (the first
//     such window on a tie);
//   * the n_best_size best candidates over all windows (a stable sort, so equal scores keep
//     window, start, end order), v2's null candidate added back when it fell off; "empty" with
//     logits 0 when nothing else is left; probabilities a softmax of the scores;
//   * the answer: the best candidate's text (v1); for v2 the best candidate with a non-empty
//     text, unless null score - its start logit - its end logit > null_score_diff_threshold,
//     then "" (that difference is the example's null_odds entry).
// Ties among logits of one window are broken towards the later token (numpy's argsort is not
// stable: its order among equal logits is unspecified; with real logits ties do not occur).
// The logits of a window cover its tokens only: run_qa with pad_to_max_length pads windows,
// and padding positions can take places in the n_best_size lists there.
#ifndef XLMR_FRAMEWORK_TRAIN_QA_POSTPROCESSING_H_
#define XLMR_FRAMEWORK_TRAIN_QA_POSTPROCESSING_H_

#include <optional>
#include <string>
#include <vector>

#include "framework/data/qa_example_reader.h"
#include "framework/data/qa_features.h"

namespace xlmr::train {

struct QaPostprocessOptions {
  bool version_2_with_negative = false;
  int n_best_size = 20;
  int max_answer_length = 30;
  float null_score_diff_threshold = 0.0f;
};

// One entry of the n-best list (nbest_predictions.json).
struct QaCandidate {
  std::string text;
  float start_logit = 0;
  float end_logit = 0;
  float probability = 0;
  bool placeholder = false;  // HF's "empty" entry when no span was possible (its JSON keys come
                             // in another order: text first)
};

struct QaPrediction {
  std::string id;
  std::string answer;              // predictions.json's value; "" is the null answer
  std::vector<QaCandidate> nbest;  // best first
  std::optional<float> null_odds;  // v2 only: null score - best non-null score
};

// One prediction per example, in example order. start_logits[f] and end_logits[f] hold one
// logit per token of features[f]. Requires features made from `examples` (PrepareQaFeatures),
// n_best_size >= 1 and max_answer_length >= 1.
std::vector<QaPrediction> PostprocessQaPredictions(
    const std::vector<data::QaExample>& examples, const std::vector<data::QaFeature>& features,
    const std::vector<std::vector<float>>& start_logits,
    const std::vector<std::vector<float>>& end_logits, const QaPostprocessOptions& options);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_QA_POSTPROCESSING_H_
