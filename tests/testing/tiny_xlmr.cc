#include "tests/testing/tiny_xlmr.h"

#include <functional>
#include <optional>

#include <numeric>
#include <utility>

#include "framework/data/label_map.h"
#include "framework/distributed/local_communicator.h"
#include "framework/distributed/zero_partition.h"
#include "gtest/gtest.h"
#include "models/encoder/init.h"

namespace xlmr::testing {
namespace {

amp::LossScalerOptions ScalerOptions(const TinyTrainerOptions& options) {
  amp::LossScalerOptions scaler;
  scaler.init_scale = options.loss_scale;
  scaler.growth_interval = options.loss_scale_growth_interval;
  scaler.min_scale = options.loss_scale_min;
  return scaler;
}

distributed::Communicator& CommOrLocal(distributed::Communicator* comm,
                                       std::unique_ptr<distributed::Communicator>& owned) {
  if (comm != nullptr) return *comm;
  owned = std::make_unique<distributed::LocalCommunicator>();
  return *owned;
}

std::optional<distributed::ZeroPartition> PartitionFor(int zero_stage, const distributed::Communicator* comm,
                                                       const ParameterStore& store) {
  if (zero_stage == 0) return std::nullopt;
  return distributed::ZeroPartition(store.total_elements(), comm == nullptr ? 1 : comm->world_size());
}

}  // namespace

models::EncoderConfig TinyXlmrConfig(const TinyModelOptions& options) {
  models::EncoderConfig c;
  c.vocab_size = 40;
  c.hidden_size = options.hidden;
  c.num_hidden_layers = options.layers;
  c.num_attention_heads = options.heads;
  c.intermediate_size = options.intermediate;
  c.max_position_embeddings = options.max_positions;
  c.type_vocab_size = 1;
  c.layer_norm_eps = 1e-5;
  c.hidden_dropout_prob = options.dropout;
  c.attention_probs_dropout_prob = options.dropout;
  c.initializer_range = options.initializer_range;
  c.id2label = options.labels;
  c.attention = options.attention;
  c.task = options.task;
  return c;
}

data::TokenizedDataset TinyDataset(int n, const TinyDataOptions& options) {
  data::TokenizedColumns columns;
  columns.label_names = options.labels;
  const int num_labels = static_cast<int>(options.labels.size());
  for (int i = 0; i < n; ++i) {
    const int length = options.uniform ? options.max_length : 3 + (i * 7) % (options.max_length - 2);
    columns.token_ids.push_back(0);
    for (int t = 1; t < length - 1; ++t) columns.token_ids.push_back(4 + (i * 13 + t * 5) % 36);
    columns.token_ids.push_back(2);
    columns.offsets.push_back(static_cast<int64_t>(columns.token_ids.size()));
    columns.lines.push_back(i + 2);
    columns.label_index.push_back(i % num_labels);
  }
  data::TokenizedDataset dataset = data::TokenizedDataset::FromColumns("tiny.tsv", std::move(columns));
  absl::StatusOr<data::LabelMap> labels = data::LabelMap::FromTrainingLabels(options.labels, "tiny.tsv");
  EXPECT_TRUE(labels.ok()) << labels.status();
  EXPECT_TRUE(dataset.AssignLabelIds(*labels).ok());
  return dataset;
}

TinyModelOptions Head64ModelOptions() {
  TinyModelOptions options;
  options.hidden = 128;
  options.heads = 2;
  options.max_positions = 80;
  return options;
}

TinyDataOptions Head64DataOptions() {
  TinyDataOptions options;
  options.max_length = 70;
  return options;
}

data::TokenizedDataset TinyTaggedDataset(int n, const TinyDataOptions& options) {
  data::TokenizedColumns columns;
  columns.label_names = options.labels;
  const int num_labels = static_cast<int>(options.labels.size());
  for (int i = 0; i < n; ++i) {
    const int length = options.uniform ? options.max_length : 3 + (i * 7) % (options.max_length - 2);
    int word = 0;
    for (int t = 0; t < length; ++t) {
      const bool special = t == 0 || t == length - 1;
      columns.token_ids.push_back(t == 0 ? 0 : special ? 2 : 4 + (i * 13 + t * 5) % 36);
      const bool starts_word = !special && t % 3 != 0;
      columns.word_index.push_back(starts_word ? word++ : -1);
      columns.token_label_index.push_back(starts_word ? (i + t) % num_labels : -1);
    }
    columns.offsets.push_back(static_cast<int64_t>(columns.token_ids.size()));
    columns.lines.push_back(i + 1);
    columns.label_index.push_back(-1);
  }
  data::TokenizedDataset dataset = data::TokenizedDataset::FromColumns("tiny.conll", std::move(columns));
  absl::StatusOr<data::LabelMap> labels = data::LabelMap::FromId2Label(options.labels, "tiny.conll");
  EXPECT_TRUE(labels.ok()) << labels.status();
  EXPECT_TRUE(dataset.AssignTokenLabelIds(*labels).ok());
  return dataset;
}

data::Batch TinyBatch(const data::TokenizedDataset& dataset, int64_t first, int64_t count) {
  std::vector<int64_t> indices(count);
  std::iota(indices.begin(), indices.end(), first);
  return data::Collate(dataset, indices, /*pad_id=*/1);
}

namespace {

train::StepSettings StepSettingsFor(const TinyTrainerOptions& options, train::Objective objective,
                                    std::function<void(const Tensor&)> record_gradients) {
  train::StepSettings settings{options.autocast, options.max_grad_norm, options.dropout_seed, options.device,
                               objective};
  if (options.record_gradients) settings.on_gradients = std::move(record_gradients);
  settings.cuda_graphs = options.cuda_graphs;
  return settings;
}

}  // namespace

TinyTrainer::TinyTrainer(const TinyTrainerOptions& options, distributed::Communicator* comm)
    : objective_(models::ObjectiveOf(options.model.task)),
      model_(TinyXlmrConfig(options.model), options.device),
      sync_(CommOrLocal(comm, owned_comm_), model_.parameters(),
            PartitionFor(options.zero_stage, comm, model_.parameters())),
      scaler_(ScalerOptions(options), /*enabled=*/options.autocast == DType::kF16),
      optimizer_(model_.parameters(), options.adam, sync_.owned()),
      schedule_(*optim::MakeLrSchedule(options.lr_schedule, options.learning_rate, options.total_steps,
                                       options.warmup_steps, 0.0)),
      step_(model_, sync_, scaler_, optimizer_, schedule_,
            StepSettingsFor(options, objective_, [this](const Tensor&) {
              gradients_ = model_.parameters().grads().ToFloatVector();
            })) {
  models::InitializeAllWeights(model_, options.init_seed);
  if (options.autocast != DType::kF32) model_.parameters().EnableHalfCopy(options.autocast, options.half_copy);
}

train::StepOutcome TinyTrainer::Step(int step, const std::vector<data::Batch>& batches,
                                     int64_t global_loss_terms) {
  if (global_loss_terms < 0) {
    int64_t examples = 0;
    for (const data::Batch& batch : batches) examples += batch.examples();
    global_loss_terms = train::GlobalLossTerms(objective_, batches, examples, sync_.communicator());
  }
  absl::StatusOr<train::StepOutcome> outcome = step_.Run(step, batches, global_loss_terms);
  EXPECT_TRUE(outcome.ok()) << outcome.status();
  if (!outcome.ok()) return train::StepOutcome{};
  // kernels/common/step_state.h's InverseScaleOf: float(1 / scale), one multiply per gradient.
  const float inverse_scale = scaler_.enabled() ? static_cast<float>(1.0 / outcome->loss_scale) : 1.0f;
  for (float& g : gradients_) g *= inverse_scale;
  return *outcome;
}

std::vector<float> TinyTrainer::gradients_of(int parameter) const {
  const FlatRange range = model_.parameters().range(parameter);
  return std::vector<float>(gradients_.begin() + range.offset, gradients_.begin() + range.offset + range.size);
}

}  // namespace xlmr::testing
