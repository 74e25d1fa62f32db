#include "tests/models/xlmr/recompute_test_util.h"

#include "framework/data/label_map.h"
#include "gtest/gtest.h"
#include "models/xlmr/init.h"

namespace xlmr::testing {
namespace {

amp::LossScalerOptions ScalerOptions(bool fp16) {
  amp::LossScalerOptions options;
  options.enabled = fp16;
  options.init_scale = 1024.0;
  return options;
}

}  // namespace

models::XlmrConfig TinyRecomputeConfig(int layers) {
  models::XlmrConfig c;
  c.vocab_size = 40;
  c.hidden_size = 16;
  c.num_hidden_layers = layers;
  c.num_attention_heads = 4;
  c.intermediate_size = 32;
  c.max_position_embeddings = 40;
  c.type_vocab_size = 1;
  c.layer_norm_eps = 1e-5;
  c.hidden_dropout_prob = 0.1;
  c.attention_probs_dropout_prob = 0.1;
  c.initializer_range = 0.2;
  c.id2label = {"a", "b", "c"};
  return c;
}

data::TokenizedDataset TinyRecomputeDataset(int n, int max_length, bool uniform) {
  data::TokenizedColumns columns;
  columns.label_names = {"a", "b", "c"};
  for (int i = 0; i < n; ++i) {
    const int length = uniform ? max_length : 3 + (i * 7) % (max_length - 2);
    columns.token_ids.push_back(0);
    for (int t = 1; t < length - 1; ++t) columns.token_ids.push_back(4 + (i * 13 + t * 5) % 36);
    columns.token_ids.push_back(2);
    columns.offsets.push_back(static_cast<int64_t>(columns.token_ids.size()));
    columns.lines.push_back(i + 2);
    columns.label_index.push_back(i % 3);
  }
  data::TokenizedDataset dataset = data::TokenizedDataset::FromColumns("tiny.tsv", std::move(columns));
  auto labels = data::LabelMap::FromTrainingLabels({"a", "b", "c"}, "tiny.tsv");
  EXPECT_TRUE(labels.ok());
  EXPECT_TRUE(dataset.AssignLabelIds(*labels).ok());
  return dataset;
}

std::vector<data::Batch> StepBatches(const data::TokenizedDataset& dataset, StepShape shape, int step) {
  std::vector<data::Batch> batches;
  for (int64_t m = 0; m < shape.accumulation; ++m) {
    std::vector<int64_t> indices;
    const int64_t first = (step * shape.accumulation + m) * shape.per_device_batch;
    for (int64_t i = 0; i < shape.per_device_batch; ++i) indices.push_back((first + i) % dataset.size());
    batches.push_back(data::Collate(dataset, indices, /*pad_id=*/1));
  }
  return batches;
}

TinyTrainer::TinyTrainer(int layers, bool fp16, uint64_t dropout_seed)
    : model_(TinyRecomputeConfig(layers), Device::kCpu),
      sync_(comm_, model_.parameters()),
      scaler_(ScalerOptions(fp16)),
      optimizer_(model_.parameters(), optim::AdamWOptions{0.9, 0.999, 1e-8, 0.01}),
      schedule_(*optim::MakeLrSchedule("constant", 1e-3, 100, 0, 0.0)),
      step_(model_, sync_, scaler_, optimizer_, schedule_,
            train::StepSettings{fp16, 1.0, dropout_seed, Device::kCpu}) {
  models::InitializeAllWeights(model_, 7);
  if (fp16) model_.parameters().EnableHalfCopy();
}

MeasuredStep TinyTrainer::Step(int step, const std::vector<data::Batch>& batches) {
  int64_t examples = 0;
  for (const data::Batch& batch : batches) examples += batch.labels.numel();
  MemoryStats& stats = MemoryStatsFor(Device::kCpu);
  const int64_t held_by_others = stats.Of(MemoryCategory::kActivations).current - HostBytes(batches);
  stats.ResetPeaks();
  absl::StatusOr<train::StepOutcome> outcome = step_.Run(step, batches, examples);
  EXPECT_TRUE(outcome.ok()) << outcome.status();
  MeasuredStep measured;
  measured.peak_activation_bytes = stats.Of(MemoryCategory::kActivations).peak - held_by_others;
  if (outcome.ok()) measured.outcome = *outcome;
  return measured;
}

int64_t HostBytes(const std::vector<data::Batch>& batches) {
  int64_t bytes = 0;
  for (const data::Batch& batch : batches) {
    bytes += static_cast<int64_t>(batch.input_ids.bytes() + batch.attention_mask.bytes() +
                                  batch.labels.bytes());
  }
  return bytes;
}

}  // namespace xlmr::testing
