#include "tests/framework/distributed/tiny_training.h"

#include <numeric>
#include <utility>

#include "framework/core/check.h"
#include "framework/data/label_map.h"

namespace xlmr::testing {

models::XlmrConfig TinyConfig() {
  models::XlmrConfig c;
  c.vocab_size = 40;
  c.hidden_size = 16;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.intermediate_size = 24;
  c.max_position_embeddings = 20;
  c.type_vocab_size = 1;
  c.layer_norm_eps = 1e-5;
  c.hidden_dropout_prob = 0.0;
  c.attention_probs_dropout_prob = 0.0;
  c.initializer_range = 0.2;
  c.id2label = {"a", "b", "c"};
  return c;
}

data::TokenizedDataset TinyDataset(int n) {
  data::TokenizedColumns columns;
  columns.label_names = {"a", "b", "c"};
  for (int i = 0; i < n; ++i) {
    const int length = 3 + (i * 7) % 8;
    columns.token_ids.push_back(0);
    for (int t = 1; t < length - 1; ++t) columns.token_ids.push_back(4 + (i * 13 + t * 5) % 36);
    columns.token_ids.push_back(2);
    columns.offsets.push_back(static_cast<int64_t>(columns.token_ids.size()));
    columns.lines.push_back(i + 2);
    columns.label_index.push_back(i % 3);
  }
  data::TokenizedDataset dataset = data::TokenizedDataset::FromColumns("tiny.tsv", std::move(columns));
  auto labels = data::LabelMap::FromTrainingLabels({"a", "b", "c"}, "tiny.tsv");
  XLMR_CHECK(labels.ok());
  XLMR_CHECK(dataset.AssignLabelIds(*labels).ok());
  return dataset;
}

data::Batch TinyBatch(const data::TokenizedDataset& dataset, int64_t first, int64_t count) {
  std::vector<int64_t> indices(count);
  std::iota(indices.begin(), indices.end(), first);
  return data::Collate(dataset, indices, /*pad_id=*/1);
}

}  // namespace xlmr::testing
