// Gradient accumulation equivalence: the gradient of an optimizer step is the gradient of the
// mean loss over the global batch, however the batch is split into micro-steps, including a
// partial last batch whose micro-batches are uneven or empty.
//
// Tolerances. Gradients: 2e-6 of the tensor's largest magnitude. The splits add the same
// per-example terms in different orders, so they differ by fp32 rounding (~1e-7 relative per
// reduction, a few reductions deep). Weights after AdamW: 1e-6 absolute with lr 1e-3. AdamW
// normalises each element by its own gradient history, so with the default eps (1e-8) an
// analytically zero gradient (the attention key bias) would turn rounding noise into a
// full-size step of random sign; the test uses eps = 1e-4 so that the update is a smooth
// function of the gradient and the comparison is meaningful.
#include <cmath>
#include <memory>
#include <vector>

#include "framework/data/batch_planner.h"
#include "framework/data/collate.h"
#include "gtest/gtest.h"
#include "tests/testing/tiny_xlmr.h"

namespace xlmr::train {
namespace {

struct RunResult {
  std::vector<std::vector<float>> grads_per_step;
  std::vector<float> weights;
};

// Trains `steps` optimizer steps with per-device batch P and accumulation A (one rank).
RunResult Train(const data::TokenizedDataset& dataset, int64_t p, int64_t a, int steps) {
  testing::TinyTrainerOptions options;
  options.adam.eps = 1e-4;  // see the tolerance note at the top
  testing::TinyTrainer trainer(options);
  auto planner = data::BatchPlanner::Create({dataset.size(), p, a, 1, 0, 11, true, {}});
  EXPECT_TRUE(planner.ok());
  RunResult result;
  for (int s = 0; s < steps; ++s) {
    const int64_t per_epoch = planner->steps_per_epoch();
    const data::StepAssignment assignment = planner->Assign(s / per_epoch, s % per_epoch);
    std::vector<data::Batch> batches;
    for (const auto& indices : assignment.micro_batches) batches.push_back(data::Collate(dataset, indices, 1));
    EXPECT_FALSE(trainer.Step(s, batches, assignment.global_examples).skipped);
    result.grads_per_step.push_back(trainer.model().parameters().grads().ToFloatVector());
  }
  result.weights = trainer.model().parameters().master().ToFloatVector();
  return result;
}

double MaxAbs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, std::fabs(double{x}));
  return m;
}

void ExpectClose(const std::vector<float>& a, const std::vector<float>& b, double tolerance, const char* what) {
  ASSERT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double{a[i]} - b[i]));
  EXPECT_LE(worst, tolerance) << what;
}

TEST(AccumulationTest, SplitsOfTheGlobalBatchGiveTheSameStep) {
  // 11 examples, global batch 8: step 1 is full, step 2 holds the 3 left (uneven and empty
  // micro-batches for the accumulating splits).
  const data::TokenizedDataset dataset = testing::TinyDataset(11);
  const RunResult whole = Train(dataset, 8, 1, 2);
  for (auto [p, a] : {std::pair<int64_t, int64_t>{4, 2}, {2, 4}, {1, 8}}) {
    const RunResult split = Train(dataset, p, a, 2);
    for (int s = 0; s < 2; ++s) {
      ExpectClose(split.grads_per_step[s], whole.grads_per_step[s], 2e-6 * MaxAbs(whole.grads_per_step[s]),
                  "gradient");
    }
    ExpectClose(split.weights, whole.weights, 1e-6, "weights after AdamW");
  }
}

TEST(AccumulationTest, PartialBatchIsTheMeanOverItsOwnExamples) {
  // The gradient of the 3-example last batch must not be diluted by the 8 of a full batch:
  // doubling the dataset's last 3 examples' weight would show up here as a factor 8/3.
  const data::TokenizedDataset dataset = testing::TinyDataset(11);
  const RunResult run = Train(dataset, 4, 2, 2);
  const double full = MaxAbs(run.grads_per_step[0]);
  const double partial = MaxAbs(run.grads_per_step[1]);
  EXPECT_GT(partial, 0.2 * full) << "partial-batch gradient looks scaled by 3/8";
  EXPECT_LT(partial, 5.0 * full);
}

}  // namespace
}  // namespace xlmr::train
