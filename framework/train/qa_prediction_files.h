// The files run_qa.py writes from its post-processing (utils_qa.postprocess_qa_predictions with
// an output_dir), same names and layout, so that scripts reading them keep working:
//   <prefix>predictions.json        {"<id>": "<answer text>", ...}; "" is the null answer
//   <prefix>nbest_predictions.json  {"<id>": [{"start_logit": 3.5, "end_logit": 2.25,
//                                   "text": "...", "probability": 0.75}, ...], ...}, best first
//                                   (HF's placeholder entry, when no span was possible:
//                                   {"text": "empty", "start_logit": 0.0, "end_logit": 0.0,
//                                   "probability": ...})
//   <prefix>null_odds.json          {"<id>": null score - best span score, ...}; v2 only
// As Python's json.dumps(..., indent=4) writes them plus a newline: four-space indentation,
// non-ASCII escaped as \uXXXX, examples in order, floats as the shortest decimal that reads back
// to the same double (the logits are float32 values, written exactly). run_qa's prefix is the
// split: "eval_" or "predict_" (empty for none).
#ifndef XLMR_FRAMEWORK_TRAIN_QA_PREDICTION_FILES_H_
#define XLMR_FRAMEWORK_TRAIN_QA_PREDICTION_FILES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/train/qa_postprocessing.h"

namespace xlmr::train {

// The three texts (null_odds.json's only when some prediction has null odds, i.e. v2).
struct QaPredictionTexts {
  std::string predictions;
  std::string nbest;
  std::string null_odds;  // empty without v2
};
QaPredictionTexts QaPredictionFileTexts(const std::vector<QaPrediction>& predictions);

// Writes them into `directory` (which must exist), each atomically and durably
// (io::WriteFileDurably), and returns the names written ("<prefix>predictions.json", ...).
// Errors name the file.
absl::StatusOr<std::vector<std::string>> WriteQaPredictionFiles(const std::string& directory,
                                                                const std::string& prefix,
                                                                const std::vector<QaPrediction>& predictions);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_QA_PREDICTION_FILES_H_
