// A question-answering file as both binaries read it: its examples (SQuAD .json or JSON lines,
// framework/data/qa_example_reader.h), run_qa's windows of them (framework/data/qa_features.h,
// tokenized by MakeTokenizeWithSpansFn) and those windows as a data set with span labels
// (framework/data/qa_dataset.h). xlmr_finetune reads its training, evaluation and test files
// with it and xlmr_predict its input, so that a model is evaluated and asked on the same windows.
#ifndef XLMR_RECIPES_QA_FILE_H_
#define XLMR_RECIPES_QA_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/data/qa_example_reader.h"
#include "framework/data/qa_features.h"
#include "framework/data/tokenized_dataset.h"
#include "models/tokenizers/text_tokenizer.h"

namespace xlmr::recipes {

// A question-answering file's examples and their windows (dataset[i] is windows[i]).
struct QaFile {
  std::vector<data::QaExample> examples;
  std::vector<data::QaFeature> windows;
  data::TokenizedDataset dataset;
};

struct QaFileOptions {
  // kRequired: training and evaluation data; without version_2_with_negative every example
  // then needs an answer (SQuAD v1.1's scores and run_qa's v1 labels assume one).
  // kOptional: data to predict; examples may lack "answers" or have none.
  data::QaAnswers answers = data::QaAnswers::kRequired;
  bool version_2_with_negative = false;
  // max_seq_length and doc_stride (the special tokens' ids are set here).
  data::QaFeatureOptions features;
};

// Reads `path` and cuts its examples into windows with `tokenizer`. InvalidArgument, one line
// naming the file (and line) and id: the reader's errors, PrepareQaFeatures', and an example
// without an answer under kRequired without version_2_with_negative.
absl::StatusOr<QaFile> ReadQaFile(const std::string& path, const QaFileOptions& options,
                                  const models::TextTokenizer& tokenizer);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_QA_FILE_H_
