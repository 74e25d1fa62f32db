#include "framework/data/column_collate.h"

#include "framework/core/check.h"

namespace xlmr::data {

int64_t RowLayout::Rows(const TokenizedDataset& dataset) const {
  XLMR_CHECK(columns >= 1 && dataset.size() % columns == 0)
      << dataset.file() << ": " << dataset.size() << " texts do not make rows of " << columns << " columns";
  return dataset.size() / columns;
}

std::vector<int64_t> ColumnExamples(const std::vector<int64_t>& rows, int64_t columns, int64_t row_count) {
  std::vector<int64_t> examples;
  examples.reserve(rows.size() * columns);
  for (int64_t c = 0; c < columns; ++c) {
    for (int64_t row : rows) examples.push_back(c * row_count + row);
  }
  return examples;
}

Batch CollateRows(const TokenizedDataset& dataset, const std::vector<int64_t>& rows, const RowLayout& layout,
                  bool packed, int32_t pad_id, int32_t segment_separator_id) {
  const std::vector<int64_t> examples =
      layout.columns == 1 ? rows : ColumnExamples(rows, layout.columns, layout.Rows(dataset));
  Batch batch = packed ? CollatePacked(dataset, examples, segment_separator_id)
                       : Collate(dataset, examples, pad_id, segment_separator_id);
  if (layout.columns == 1) return batch;
  const int64_t anchors = static_cast<int64_t>(rows.size());
  if (dataset.has_targets()) {  // scored pairs: row r's score is its first text's target
    batch.labels = Tensor::Zeros({anchors}, DType::kF32, Device::kCpu, MemoryCategory::kActivations);
    for (int64_t i = 0; i < anchors; ++i) batch.labels.data<float>()[i] = dataset.target(rows[i]);
    batch.loss_terms = anchors > 0 ? 1 : 0;
    return batch;
  }
  batch.labels = Tensor::Zeros({anchors}, DType::kI32, Device::kCpu, MemoryCategory::kActivations);
  for (int64_t i = 0; i < anchors; ++i) batch.labels.data<int32_t>()[i] = static_cast<int32_t>(i);
  batch.loss_terms = anchors;
  return batch;
}

}  // namespace xlmr::data
