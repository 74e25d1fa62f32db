// The tiny XLM-R of tests/testing, trained through the real TrainStep, for the recompute
// tests: its peak activation memory per step, and deterministic data (no shuffling: micro-batch m of step s is examples [(sA+m)P, (sA+m+1)P)).
#ifndef XLMR_TESTS_MODELS_ENCODER_RECOMPUTE_TEST_UTIL_H_
#define XLMR_TESTS_MODELS_ENCODER_RECOMPUTE_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "framework/data/collate.h"
#include "framework/data/tokenized_dataset.h"
#include "framework/train/train_step.h"
#include "models/encoder/model.h"
#include "tests/testing/tiny_xlmr.h"

namespace xlmr::testing {

// The shared tiny model (tests/testing/tiny_xlmr.h) with 4 heads, intermediate 32, dropout
// 0.1 everywhere and `layers` blocks.
models::EncoderConfig TinyRecomputeConfig(int layers);

// What the recompute tests vary: the precision and the attention (eager keeps the s^2
// probabilities that selective recompute drops; fused keeps none).
struct RecomputeVariant {
  bool fp16 = false;
  models::AttentionImplementation attention = models::AttentionImplementation::kFused;
};
// The four variants, and a test-name suffix such as "Fp16Fused".
std::vector<RecomputeVariant> AllRecomputeVariants();
std::string VariantName(const RecomputeVariant& variant);

// `n` examples; lengths vary in [3, max_length] unless `uniform`, where every example has
// exactly max_length tokens (so every collated batch is [P, max_length]).
data::TokenizedDataset TinyRecomputeDataset(int n, int max_length, bool uniform);

struct StepShape {
  int64_t per_device_batch = 4;  // P
  int64_t accumulation = 2;      // A
};

// Step s's micro-batches, collated (host tensors, kActivations): padded, or packed
// (data::CollatePacked, --padding_free).
std::vector<data::Batch> StepBatches(const data::TokenizedDataset& dataset, StepShape shape, int step,
                                     bool packed = false);

struct MeasuredStep {
  train::StepOutcome outcome;
  // The activation peak of the step, as the trainer measures it (peaks reset after the
  // batches were collated), less whatever else the test process holds: so it counts the
  // step's host batches and everything the step allocates.
  int64_t peak_activation_bytes = 0;
  // The same peak seen by the CPU allocator itself (every byte allocated, whatever its
  // category), counted from the same baseline: the witness for the counters. Equal to
  // peak_activation_bytes when everything the step allocates is tagged as an activation; under
  // fp16 the CPU backend also widens fp16 operands into short-lived fp32 copies tagged
  // kWorkspace (a GPU reads fp16 directly), whose peak is peak_workspace_bytes.
  int64_t peak_allocated_bytes = 0;
  int64_t peak_workspace_bytes = 0;
};

// The shared TinyTrainer with the recompute tests' model: weights from seed 7, AdamW (lr 1e-3,
// weight decay 0.01), fp16 with loss scale 1024 and the fp16 weight copy.
class RecomputeTrainer {
 public:
  RecomputeTrainer(int layers, const RecomputeVariant& variant, uint64_t dropout_seed = 11);

  models::EncoderModel& model() { return trainer_.model(); }
  // One optimizer step over `batches` with its measured activation peak.
  MeasuredStep Step(int step, const std::vector<data::Batch>& batches);

 private:
  TinyTrainer trainer_;
};

// The bytes of the host batches (what the trainer holds through a step on CPU).
int64_t HostBytes(const std::vector<data::Batch>& batches);

}  // namespace xlmr::testing

#endif  // XLMR_TESTS_MODELS_ENCODER_RECOMPUTE_TEST_UTIL_H_
