#include "tests/models/xlmr/recompute_test_util.h"

#include "gtest/gtest.h"

namespace xlmr::testing {
namespace {

TinyModelOptions RecomputeModel(int layers) {
  TinyModelOptions model;
  model.layers = layers;
  model.heads = 4;
  model.intermediate = 32;
  model.dropout = 0.1;
  return model;
}

TinyTrainerOptions RecomputeTraining(int layers, bool fp16, uint64_t dropout_seed) {
  TinyTrainerOptions options;
  options.model = RecomputeModel(layers);
  options.fp16 = fp16;
  options.dropout_seed = dropout_seed;
  return options;
}

}  // namespace

models::XlmrConfig TinyRecomputeConfig(int layers) { return TinyXlmrConfig(RecomputeModel(layers)); }

data::TokenizedDataset TinyRecomputeDataset(int n, int max_length, bool uniform) {
  TinyDataOptions options;
  options.max_length = max_length;
  options.uniform = uniform;
  return TinyDataset(n, options);
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

RecomputeTrainer::RecomputeTrainer(int layers, bool fp16, uint64_t dropout_seed)
    : trainer_(RecomputeTraining(layers, fp16, dropout_seed)) {}

MeasuredStep RecomputeTrainer::Step(int step, const std::vector<data::Batch>& batches) {
  MemoryStats& stats = MemoryStatsFor(Device::kCpu);
  const int64_t held_by_others = stats.Of(MemoryCategory::kActivations).current - HostBytes(batches);
  stats.ResetPeaks();
  MeasuredStep measured;
  measured.outcome = trainer_.Step(step, batches);
  measured.peak_activation_bytes = stats.Of(MemoryCategory::kActivations).peak - held_by_others;
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
