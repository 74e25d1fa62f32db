// Whole training steps captured into CUDA graphs and replayed (framework/train/step_graphs.h)
// against the same steps run op by op (--cuda_graphs=false), both on the GPU, through TrainStep
// as the trainer drives it. The expectation is bit equality: a replay runs the captured kernels
// with the same arguments on the same bytes, and every per-step value (inputs, labels, AdamW's
// scalars, the loss terms, the dropout step) is read from device memory written before the
// launch. A per-step value frozen into the graph instead (the bug this guards against: a
// kernel argument or a host copy captured once) gives the captured step's value to every
// replay, and the weights differ within a step or two.
//
// Set-up: the tiny XLM-R with heads 64 wide (the fused attention kernels), fp16 with dropout 0.1,
// two micro-batches of 6 examples a step, each step on new examples of one fixed length (one
// batch layout), 14 steps over more than one turn of the 8-row state ring: step 1 runs directly
// (the layout's first), step 2 is captured, steps 3-14 replay. Padded and packed batches; and a
// loss scale so large that the first steps overflow and skip, so that replayed steps skip, back
// off and then update as direct ones do.
#include <cstdint>
#include <string>
#include <vector>

#include "framework/core/device.h"
#include "framework/data/collate.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/testing/tiny_xlmr.h"

namespace xlmr::testing {
namespace {

constexpr int kSteps = 14;
constexpr int kMicroBatch = 6;

struct TrainingRun {
  std::vector<train::StepOutcome> outcomes;
  Tensor weights;  // fp32 masters on the host
  int64_t direct = 0, captures = 0, replays = 0;
};

TrainingRun Train(bool graphs, bool packed, double loss_scale) {
  TinyTrainerOptions options;
  options.device = Device::kCuda;
  options.model = Head64ModelOptions();
  options.model.dropout = 0.1;
  options.autocast = DType::kF16;
  options.loss_scale = loss_scale;
  options.loss_scale_growth_interval = 3;  // growth inside the replayed steps too
  options.lr_schedule = "linear";
  options.warmup_steps = 2;
  options.total_steps = kSteps;
  options.record_gradients = false;  // a host callback inside the step would keep it from being captured
  options.cuda_graphs = graphs;
  TinyDataOptions data;
  data.uniform = true;
  data.max_length = 40;
  const data::TokenizedDataset dataset = TinyDataset(2 * kMicroBatch * kSteps, data);
  TinyTrainer trainer(options);
  TrainingRun run;
  for (int step = 0; step < kSteps; ++step) {
    std::vector<data::Batch> batches;
    for (int m = 0; m < 2; ++m) {
      const int64_t first = (2 * step + m) * kMicroBatch;
      std::vector<int64_t> indices(kMicroBatch);
      for (int i = 0; i < kMicroBatch; ++i) indices[i] = first + i;
      batches.push_back(packed ? data::CollatePacked(dataset, indices) : TinyBatch(dataset, first, kMicroBatch));
    }
    run.outcomes.push_back(trainer.Step(step, batches));
  }
  run.weights = trainer.model().parameters().master().ToDevice(Device::kCpu);
  if (const train::StepGraphs* step_graphs = trainer.train_step().graphs(); step_graphs != nullptr) {
    run.direct = step_graphs->direct_steps();
    run.captures = step_graphs->captures();
    run.replays = step_graphs->replays();
  }
  return run;
}

void ExpectSameRuns(const TrainingRun& graphs, const TrainingRun& direct) {
  ASSERT_EQ(graphs.outcomes.size(), direct.outcomes.size());
  for (size_t s = 0; s < direct.outcomes.size(); ++s) {
    SCOPED_TRACE("step " + std::to_string(s + 1));
    EXPECT_EQ(graphs.outcomes[s].loss, direct.outcomes[s].loss);
    EXPECT_EQ(graphs.outcomes[s].skipped, direct.outcomes[s].skipped);
    EXPECT_EQ(graphs.outcomes[s].loss_scale, direct.outcomes[s].loss_scale);
    EXPECT_EQ(graphs.outcomes[s].learning_rate, direct.outcomes[s].learning_rate);
    EXPECT_EQ(graphs.outcomes[s].grad_norm, direct.outcomes[s].grad_norm);
  }
  ExpectBitEqual("weights after the steps", graphs.weights, direct.weights);
  // One layout: its first step direct, its second captured, replays after.
  EXPECT_EQ(graphs.direct, 1);
  EXPECT_EQ(graphs.captures, 1);
  EXPECT_EQ(graphs.replays, kSteps - 2);
  EXPECT_EQ(direct.captures + direct.replays, 0);
}

using StepGraphGpuTest = GpuTest;

TEST_F(StepGraphGpuTest, ReplayedPaddedStepsAreTheDirectStepsBitForBit) {
  ExpectSameRuns(Train(true, false, 1024.0), Train(false, false, 1024.0));
}

TEST_F(StepGraphGpuTest, ReplayedPackedStepsAreTheDirectStepsBitForBit) {
  ExpectSameRuns(Train(true, true, 1024.0), Train(false, true, 1024.0));
}

TEST_F(StepGraphGpuTest, ReplayedOverflowsSkipAndBackOffAsDirectOnes) {
  // 2^30: the loss gradient (|softmax - one-hot| up to ~0.7, times scale / 12 terms) overflows
  // fp16 until the scale is below ~2^20, about ten halvings, all but two of them replayed, and
  // the replays then update once it fits.
  const double scale = 1073741824.0;
  const TrainingRun graphs = Train(true, false, scale), direct = Train(false, false, scale);
  int skipped_replays = 0, updated_replays = 0;
  for (int s = 2; s < kSteps; ++s) (graphs.outcomes[s].skipped ? skipped_replays : updated_replays) += 1;
  EXPECT_GT(skipped_replays, 0) << "no replayed step overflowed: the case is not exercised";
  EXPECT_GT(updated_replays, 0) << "every replayed step overflowed: the case is not exercised";
  ExpectSameRuns(graphs, direct);
}

}  // namespace
}  // namespace xlmr::testing
