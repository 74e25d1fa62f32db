// TrainStep's decisions are taken on the device and read later (framework/train/train_step.h):
// reading a step's outcome right after it (what the trainer does) and reading several steps
// at once, up to the whole ring (kernels::kStepStateRows steps), give the same outcomes, the same
// weights, moments, loss-scaler state and update count, bit for bit. The run forces the cases
// where the host's knowledge matters: fp16 overflows that skip steps (so AdamW's update count,
// and with it the warmup rate and the bias corrections, falls behind the step count by an amount
// the host learns only when it reads), a scale that grows back into overflow every few steps,
// and clipping at every step. Against the binary before the change: tests/recipes's
// step_decisions_test.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/common/step_state.h"
#include "tests/testing/tiny_xlmr.h"

namespace xlmr::train {
namespace {

testing::TinyTrainerOptions Options() {
  testing::TinyTrainerOptions o;
  o.model.layers = 2;
  o.model.labels = {"a", "b"};
  o.autocast = DType::kF16;
  o.loss_scale = 1e9;  // overflows at first; halves down to a usable scale
  o.loss_scale_growth_interval = 2;  // then grows back into overflow again and again
  o.lr_schedule = "linear";
  o.warmup_steps = 10;
  o.total_steps = 60;
  o.max_grad_norm = 0.05;
  return o;
}

std::vector<data::Batch> Batches(int step) {
  testing::TinyDataOptions data;
  data.labels = {"a", "b"};
  static const data::TokenizedDataset dataset = testing::TinyDataset(48, data);
  return {testing::TinyBatch(dataset, (step * 6) % 42, 6)};
}

void ExpectSameOutcome(const StepOutcome& a, const StepOutcome& b, int step) {
  EXPECT_EQ(a.loss, b.loss) << "step " << step;
  EXPECT_EQ(a.skipped, b.skipped) << "step " << step;
  EXPECT_EQ(a.grad_norm, b.grad_norm) << "step " << step;
  EXPECT_EQ(a.loss_scale, b.loss_scale) << "step " << step;
  EXPECT_EQ(a.learning_rate, b.learning_rate) << "step " << step;
  EXPECT_EQ(a.micro_steps, b.micro_steps) << "step " << step;
}

TEST(DeferredReadbackTest, ReadingStepsLateChangesNothing) {
  testing::TinyTrainer every_step(Options());
  testing::TinyTrainer late(Options());
  int skipped = 0;
  int step = 0;
  // Groups of 1, 2, ..., kStepStateRows steps enqueued before any is read.
  for (int group = 1; step < 60; group = group % kernels::kStepStateRows + 1) {
    std::vector<StepOutcome> expected;
    const int first = step;
    for (int i = 0; i < group && step < 60; ++i, ++step) {
      expected.push_back(every_step.Step(step, Batches(step)));
      late.train_step().Enqueue(step, Batches(step), 6);
    }
    ASSERT_EQ(late.train_step().pending(), step - first);
    for (size_t i = 0; i < expected.size(); ++i) {
      absl::StatusOr<StepOutcome> outcome = late.train_step().Collect();
      ASSERT_TRUE(outcome.ok()) << outcome.status();
      ExpectSameOutcome(*outcome, expected[i], first + static_cast<int>(i));
      skipped += expected[i].skipped ? 1 : 0;
    }
  }
  EXPECT_GE(skipped, 10) << "too few overflows: the test lost its point";
  EXPECT_LE(skipped, 40) << "too few updates: the test lost its point";
  EXPECT_EQ(late.model().parameters().master().ToFloatVector(), every_step.model().parameters().master().ToFloatVector());
  EXPECT_EQ(late.optimizer().exp_avg().ToFloatVector(), every_step.optimizer().exp_avg().ToFloatVector());
  EXPECT_EQ(late.optimizer().exp_avg_sq().ToFloatVector(), every_step.optimizer().exp_avg_sq().ToFloatVector());
  EXPECT_EQ(late.optimizer().step_count(), every_step.optimizer().step_count());
  EXPECT_EQ(late.optimizer().step_count(), 60 - skipped);
  EXPECT_EQ(late.scaler().GetState().scale, every_step.scaler().GetState().scale);
  EXPECT_EQ(late.scaler().GetState().growth_tracker, every_step.scaler().GetState().growth_tracker);
}

// The scale collapses below min_scale: the host learns it when it reads that step (today's
// error), and the steps enqueued after it updated nothing.
TEST(DeferredReadbackTest, ACollapseReadLateLeavesTheWeightsOfTheFailure) {
  testing::TinyTrainerOptions options = Options();
  options.loss_scale = 1e38;
  options.loss_scale_min = 1e30;  // every gradient overflows at such scales: ~27 halvings, then the error
  testing::TinyTrainer trainer(options);
  const std::vector<float> initial = trainer.model().parameters().master().ToFloatVector();
  // Enqueued in whole rings, read after each: the collapse is read up to 7 steps late.
  absl::Status failure;
  int failed_at = -1;
  for (int step = 0; step < 80 && failed_at < 0;) {
    for (int i = 0; i < kernels::kStepStateRows; ++i, ++step) trainer.train_step().Enqueue(step, Batches(step), 6);
    for (int i = 0; i < kernels::kStepStateRows; ++i) {
      absl::StatusOr<StepOutcome> outcome = trainer.train_step().Collect();
      if (!outcome.ok() && failed_at < 0) {
        failure = outcome.status();
        failed_at = step - kernels::kStepStateRows + i;
      }
    }
  }
  ASSERT_GE(failed_at, 0) << "the scale never collapsed";
  EXPECT_EQ(failure.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(failure.message().find("fell below --loss_scale_min"), std::string::npos) << failure;
  EXPECT_GT(failed_at, 20);
  EXPECT_LT(failed_at, 35);
  // Every step overflowed up to the collapse, and none after it updated anything.
  EXPECT_EQ(trainer.model().parameters().master().ToFloatVector(), initial);
  EXPECT_EQ(trainer.optimizer().step_count(), 0);
}

}  // namespace
}  // namespace xlmr::train
