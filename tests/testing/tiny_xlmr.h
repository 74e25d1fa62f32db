// A tiny XLM-R classifier, its data and its training step, shared by the tests that train
// through the real TrainStep (accumulation, fp16, recompute, data parallelism): small enough
// that a step takes milliseconds, shaped like the real model.
#ifndef XLMR_TESTS_TESTING_TINY_XLMR_H_
#define XLMR_TESTS_TESTING_TINY_XLMR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/amp/loss_scaler.h"
#include "framework/data/collate.h"
#include "framework/data/tokenized_dataset.h"
#include "framework/distributed/communicator.h"
#include "framework/distributed/gradient_synchronizer.h"
#include "framework/optim/adamw.h"
#include "framework/tensor/dtype.h"
#include "framework/optim/lr_schedule.h"
#include "framework/train/train_step.h"
#include "models/encoder/model.h"

namespace xlmr::testing {

// Vocabulary 40; the rest as given.
struct TinyModelOptions {
  int hidden = 16;
  int layers = 2;
  int heads = 2;
  int intermediate = 24;
  int max_positions = 40;
  double dropout = 0.0;  // hidden and attention
  double initializer_range = 0.2;
  std::vector<std::string> labels = {"a", "b", "c"};
  models::AttentionImplementation attention = models::AttentionImplementation::kFused;
  models::Task task = models::Task::kSequenceClassification;
};
models::EncoderConfig TinyXlmrConfig(const TinyModelOptions& options = {});

// `n` examples with label i % |labels| and ids from a fixed pattern; lengths vary in
// [3, max_length] unless `uniform` (then every example has max_length tokens).
struct TinyDataOptions {
  std::vector<std::string> labels = {"a", "b", "c"};
  int max_length = 10;
  bool uniform = false;
};
data::TokenizedDataset TinyDataset(int n, const TinyDataOptions& options = {});

// The tiny model with heads 64 wide (hidden 128, 2 heads, 80 positions), the head size of XLM-R
// base and of the CUDA fused attention kernels, and data of up to 66 tokens (TinyDataset's
// lengths 3 + 7i mod 68: two 64-key tiles, padding inside each batch), so that a step runs the
// fused kernels over more than one key tile. Dropout and the rest as TinyModelOptions' defaults.
TinyModelOptions Head64ModelOptions();
TinyDataOptions Head64DataOptions();

// `n` token-classification examples (Task::kTokenClassification), ids as TinyDataset's:
// every token between <s> and </s> starts a word with tag (i + t) % |labels|, except every
// third one, a later sub-token of the word before (label -100).
data::TokenizedDataset TinyTaggedDataset(int n, const TinyDataOptions& options = {});

// Examples [first, first + count) as one padded batch (pad id 1).
data::Batch TinyBatch(const data::TokenizedDataset& dataset, int64_t first, int64_t count);

struct TinyTrainerOptions {
  TinyModelOptions model;
  uint64_t init_seed = 7;
  uint64_t dropout_seed = 11;
  // Autocast dtype, as TrainerOptions::autocast: kF16 scales the loss, kBF16 does not.
  DType autocast = DType::kF32;
  double loss_scale = 1024.0;  // initial scale under fp16
  int64_t loss_scale_growth_interval = 2000;
  double loss_scale_min = 1.0;
  std::string lr_schedule = "constant";
  double learning_rate = 1e-3;
  int64_t warmup_steps = 0;
  int64_t total_steps = 100;
  optim::AdamWOptions adam = {0.9, 0.999, 1e-8, 0.01};
  double max_grad_norm = 1.0;
  // Where the model, its buffers and every op live; kCuda needs CudaContext::Init first.
  Device device = Device::kCpu;
  // TrainerOptions::zero_stage: 1 shards the optimizer over the communicator's ranks.
  int zero_stage = 0;
  // gradients() is kept by a host callback inside the step (StepSettings::on_gradients), which
  // keeps the step from being captured; false: no callback, gradients() stays empty.
  bool record_gradients = true;
  bool cuda_graphs = true;  // StepSettings::cuda_graphs
  // How the half working copy is held under autocast (ParameterStore::EnableHalfCopy).
  ParameterStore::HalfCopy half_copy = ParameterStore::HalfCopy::kKept;
};

// The model, optimizer, loss scaler and gradient synchronizer wired as the trainer wires them.
class TinyTrainer {
 public:
  // `comm` may be null (a world-size-1 LocalCommunicator is used).
  explicit TinyTrainer(const TinyTrainerOptions& options = {}, distributed::Communicator* comm = nullptr);

  models::EncoderModel& model() { return model_; }
  optim::AdamW& optimizer() { return optimizer_; }
  const optim::LrSchedule& schedule() const { return schedule_; }
  amp::DynamicLossScaler& scaler() { return scaler_; }
  // The step itself, for tests that enqueue steps and read their outcomes later.
  train::TrainStep& train_step() { return step_; }

  // One optimizer step over this rank's micro-batches; `global_loss_terms` < 0 means what the
  // trainer computes (train::GlobalLossTerms over these batches: their examples, or their
  // labelled tokens for token classification). Fails the test when the step fails.
  train::StepOutcome Step(int step, const std::vector<data::Batch>& batches, int64_t global_loss_terms = -1);
  // The summed gradients of the last Step (the whole flat buffer), unscaled by the loss scale
  // that step used as the optimizer unscales them (one float multiply), not clipped: the
  // optimizer reads them raw and zeroes them (StepSettings::on_gradients).
  const std::vector<float>& gradients() const { return gradients_; }
  // The same for one parameter of the store.
  std::vector<float> gradients_of(int parameter) const;

 private:
  std::unique_ptr<distributed::Communicator> owned_comm_;
  train::Objective objective_;
  models::EncoderModel model_;
  distributed::GradientSynchronizer sync_;
  amp::DynamicLossScaler scaler_;
  optim::AdamW optimizer_;
  optim::LrSchedule schedule_;
  train::TrainStep step_;
  std::vector<float> gradients_;
};

}  // namespace xlmr::testing

#endif  // XLMR_TESTS_TESTING_TINY_XLMR_H_
