#include "framework/data/qa_dataset.h"

#include "framework/core/check.h"

namespace xlmr::data {

TokenizedDataset MakeQaDataset(const std::string& file, const std::vector<QaExample>& examples,
                               const std::vector<QaFeature>& features) {
  TokenizedColumns columns;
  std::vector<int32_t> starts, ends;
  for (const QaFeature& feature : features) {
    XLMR_CHECK(feature.example_index >= 0 &&
               feature.example_index < static_cast<int64_t>(examples.size()))
        << "feature of example " << feature.example_index << " of " << examples.size();
    columns.token_ids.insert(columns.token_ids.end(), feature.input_ids.begin(),
                             feature.input_ids.end());
    columns.offsets.push_back(static_cast<int64_t>(columns.token_ids.size()));
    columns.lines.push_back(examples[feature.example_index].line);
    columns.label_index.push_back(-1);
    starts.push_back(feature.start_position);
    ends.push_back(feature.end_position);
  }
  TokenizedDataset dataset = TokenizedDataset::FromColumns(file, std::move(columns));
  dataset.AssignSpanLabels(std::move(starts), std::move(ends));
  return dataset;
}

}  // namespace xlmr::data
