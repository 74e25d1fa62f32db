// The training run's per-row predictions of --test_file for the tasks other than question
// answering: predict_predictions.jsonl in the final output directory, in xlmr_predict's format
// (recipes/predict_writer.h), as run_glue and run_ner write their test predictions beside the
// model. With the model's recorded settings (prediction_args.json) xlmr_predict on the same file
// gives the same bytes on the same device and precision: the same forward (train::Predict), the
// same batches (--per_device_eval_batch_size from the first row), the same writer.
#ifndef XLMR_RECIPES_TEST_PREDICTIONS_H_
#define XLMR_RECIPES_TEST_PREDICTIONS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/data/tagged_sentence_reader.h"
#include "framework/data/tokenized_dataset.h"
#include "framework/train/evaluate.h"
#include "framework/train/model_interface.h"

namespace xlmr::recipes {

inline constexpr char kTestPredictionsFileName[] = "predict_predictions.jsonl";

// What the file needs besides the model: the test data as tokenized for the evaluation, the
// labels in id order, and for token classification the file and its columns (the words are
// re-read: the token cache keeps ids only).
struct TestPredictionSource {
  const data::TokenizedDataset* test = nullptr;  // not owned
  std::vector<std::string> id2label;
  train::EvalSettings settings;  // the final evaluation's
  std::string test_file;                // kPerToken only
  data::WordTagColumns tagged_columns;  // kPerToken only
};

// Predicts every row of source.test on this process (no communication: the Trainer calls its
// final evaluations' files on rank 0 only) and writes `directory`/predict_predictions.jsonl
// through its .tmp name; returns the file's name. Errors name the file.
absl::StatusOr<std::vector<std::string>> WriteTestPredictions(train::TrainableModel& model,
                                                              const TestPredictionSource& source,
                                                              const std::string& directory);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_TEST_PREDICTIONS_H_
