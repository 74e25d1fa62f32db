// Test helper: the question-answering post-processing golden data
// (testdata/qa_postprocessing.json, made by testdata/make_qa_postprocessing_testdata.py with
// Hugging Face's utils_qa) and our predictions for each of its cases.
#ifndef XLMR_TESTS_FRAMEWORK_TRAIN_QA_GOLDEN_CASES_H_
#define XLMR_TESTS_FRAMEWORK_TRAIN_QA_GOLDEN_CASES_H_

#include <vector>

#include "framework/data/qa_example_reader.h"
#include "framework/train/qa_postprocessing.h"
#include "nlohmann/json.hpp"

namespace xlmr::train::testing {

struct QaGoldenCase {
  nlohmann::json golden;                 // one entry of "cases": options and HF's outputs
  QaPostprocessOptions options;
  std::vector<QaPrediction> predictions;  // ours, on the same logits
};

struct QaGolden {
  std::vector<data::QaExample> examples;
  std::vector<QaGoldenCase> cases;
};

// Reads the golden file, makes the features with the embedded tokenizer (as the generator
// did with HF's) and runs PostprocessQaPredictions for every case. Fails the test (gtest
// assertions) when a file is missing or the features do not line up with the logits.
QaGolden LoadQaGolden();

}  // namespace xlmr::train::testing

#endif  // XLMR_TESTS_FRAMEWORK_TRAIN_QA_GOLDEN_CASES_H_
