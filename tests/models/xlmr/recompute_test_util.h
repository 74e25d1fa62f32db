// A tiny XLM-R trained through the real TrainStep, for the recompute tests: the model, its
// optimizer, loss scaler and gradient synchronizer wired as the trainer wires them, and
// deterministic data (no shuffling: micro-batch m of step s is examples [(sA+m)P, (sA+m+1)P)).
#ifndef XLMR_TESTS_MODELS_XLMR_RECOMPUTE_TEST_UTIL_H_
#define XLMR_TESTS_MODELS_XLMR_RECOMPUTE_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "framework/amp/loss_scaler.h"
#include "framework/data/collate.h"
#include "framework/data/tokenized_dataset.h"
#include "framework/distributed/gradient_synchronizer.h"
#include "framework/distributed/local_communicator.h"
#include "framework/optim/adamw.h"
#include "framework/optim/lr_schedule.h"
#include "framework/train/train_step.h"
#include "models/xlmr/model.h"

namespace xlmr::testing {

// Hidden 16, 4 heads, intermediate 32, dropout 0.1 everywhere, `layers` blocks, 3 labels.
models::XlmrConfig TinyRecomputeConfig(int layers);

// `n` examples; lengths vary in [3, max_length] unless `uniform`, where every example has
// exactly max_length tokens (so every collated batch is [P, max_length]).
data::TokenizedDataset TinyRecomputeDataset(int n, int max_length, bool uniform);

struct StepShape {
  int64_t per_device_batch = 4;  // P
  int64_t accumulation = 2;      // A
};

// Step s's micro-batches, collated (host tensors, kActivations).
std::vector<data::Batch> StepBatches(const data::TokenizedDataset& dataset, StepShape shape, int step);

struct MeasuredStep {
  train::StepOutcome outcome;
  // The activation peak of the step, as the trainer measures it (peaks reset after the
  // batches were collated), less whatever else the test process holds: so it counts the
  // step's host batches and everything the step allocates.
  int64_t peak_activation_bytes = 0;
};

class TinyTrainer {
 public:
  // Weights from seed 7; AdamW with lr 1e-3; fp16: loss scale 1024 and the fp16 weight copy.
  TinyTrainer(int layers, bool fp16, uint64_t dropout_seed = 11);

  models::XlmrForSequenceClassification& model() { return model_; }
  // One optimizer step over `batches`; fails the test when the step fails.
  MeasuredStep Step(int step, const std::vector<data::Batch>& batches);

 private:
  models::XlmrForSequenceClassification model_;
  distributed::LocalCommunicator comm_;
  distributed::GradientSynchronizer sync_;
  amp::DynamicLossScaler scaler_;
  optim::AdamW optimizer_;
  optim::LrSchedule schedule_;
  train::TrainStep step_;
};

// The bytes of the host batches (what the trainer holds through a step on CPU).
int64_t HostBytes(const std::vector<data::Batch>& batches);

}  // namespace xlmr::testing

#endif  // XLMR_TESTS_MODELS_XLMR_RECOMPUTE_TEST_UTIL_H_
