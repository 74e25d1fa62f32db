// xlmr_predict for a question-answering model (XLMRobertaForQuestionAnswering), as run_qa.py
// predicts (--do_predict): the input file's examples, run_qa's windows of them exactly as
// xlmr_finetune cuts its evaluation data (qa_file.h, the same flags), the evaluation's forward
// and post-processing (train::EvaluateQa: one code path with training's evaluation), and
// run_qa's files in --output_dir:
//
//   predictions.json, nbest_predictions.json   always (framework/train/qa_prediction_files.h)
//   null_odds.json                             with --version_2_with_negative
//   predict_results.json                       the SQuAD figures with run_qa's "predict_" prefix
//                                              and predict_examples, only when every example
//                                              has gold answers (train::CanScoreQa)
//
// The input may leave "answers" out (data::QaAnswers::kOptional). The directory is created
// when missing; each file is written atomically and durably (io::WriteFileDurably). A file of
// ours that this prediction does not write (null_odds.json without v2, predict_results.json
// without gold answers) is removed, so that the directory describes this prediction only.
#ifndef XLMR_RECIPES_QA_PREDICT_H_
#define XLMR_RECIPES_QA_PREDICT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/train/evaluate.h"
#include "framework/train/model_interface.h"
#include "models/tokenizers/text_tokenizer.h"
#include "recipes/common_flags.h"
#include "recipes/qa_file.h"

namespace xlmr::recipes {

struct QaPredictOptions {
  std::string input_file;
  std::string output_dir;
  QaFlags qa;                 // --max_seq_length, --doc_stride, post-processing
  train::EvalSettings eval;   // batch size, autocast, pad id, device (the objective is set here)
};

// The input's examples and windows, "answers" optional. InvalidArgument naming the file (and
// line) and id for bad input (qa_file.h).
absl::StatusOr<QaFile> ReadQaInput(const QaPredictOptions& options, const models::TextTokenizer& tokenizer);

// What AnswerQuestions wrote.
struct QaPredictSummary {
  int64_t questions = 0;
  std::vector<std::string> files;  // names in output_dir, in the order written
  // The "predict_" figures of predict_results.json; empty when the input cannot be scored.
  std::vector<std::pair<std::string, double>> figures;
};

// Answers every question of `input` with `model` (the directory's trained question-answering
// model) and writes the files above into options.output_dir. Errors (the directory or a file
// could not be written) name the path.
absl::StatusOr<QaPredictSummary> AnswerQuestions(train::TrainableModel& model, const QaFile& input,
                                                 const QaPredictOptions& options);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_QA_PREDICT_H_
