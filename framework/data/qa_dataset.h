// Question-answering windows as the trainer's data set: one example per window
// (framework/data/qa_features.h), its token ids, the line of the example it came from (0 for
// SQuAD JSON, which has no lines per example), no class labels, and run_qa's answer span as
// span labels (TokenizedDataset::AssignSpanLabels), which Collate turns into the [2, B]
// positions of train::Objective::kSpanStartEnd.
#ifndef XLMR_FRAMEWORK_DATA_QA_DATASET_H_
#define XLMR_FRAMEWORK_DATA_QA_DATASET_H_

#include <string>
#include <vector>

#include "framework/data/qa_example_reader.h"
#include "framework/data/qa_features.h"
#include "framework/data/tokenized_dataset.h"

namespace xlmr::data {

// Requires `features` made from `examples` (PrepareQaFeatures).
TokenizedDataset MakeQaDataset(const std::string& file, const std::vector<QaExample>& examples,
                               const std::vector<QaFeature>& features);

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_QA_DATASET_H_
