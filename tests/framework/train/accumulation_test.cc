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
  std::vector<double> loss_per_step;  // the step's mean loss over the global batch
  std::vector<std::vector<float>> grads_per_step;
  std::vector<float> weights;
};

// Trains `steps` optimizer steps with per-device batch P and accumulation A (one rank).
RunResult Train(const data::TokenizedDataset& dataset, int64_t p, int64_t a, int steps) {
  testing::TinyTrainerOptions options;
  options.adam.eps = 1e-4;  // see the tolerance note at the top
  // No clipping: a gradient scaled by the wrong factor but clipped to the same norm would give
  // the same weights.
  options.max_grad_norm = 0;
  testing::TinyTrainer trainer(options);
  auto planner = data::BatchPlanner::Create({dataset.size(), p, a, 1, 0, 11, true, {}});
  EXPECT_TRUE(planner.ok());
  RunResult result;
  for (int s = 0; s < steps; ++s) {
    const int64_t per_epoch = planner->steps_per_epoch();
    const data::StepAssignment assignment = planner->Assign(s / per_epoch, s % per_epoch);
    std::vector<data::Batch> batches;
    for (const auto& indices : assignment.micro_batches) batches.push_back(data::Collate(dataset, indices, 1));
    const StepOutcome outcome = trainer.Step(s, batches, assignment.global_examples);
    EXPECT_FALSE(outcome.skipped);
    result.loss_per_step.push_back(outcome.loss);
    result.grads_per_step.push_back(trainer.gradients());
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
      // Every micro-batch's loss counts (a sum of a few fp32 per-example terms, added in double
      // in another grouping: 1e-6 relative is far above that and far below a lost micro-batch).
      EXPECT_NEAR(split.loss_per_step[s], whole.loss_per_step[s], 1e-6 * whole.loss_per_step[s])
          << "the loss of step " << s + 1 << " split " << p << " x " << a;
    }
    ExpectClose(split.weights, whole.weights, 1e-6, "weights after AdamW");
  }
}

TEST(AccumulationTest, PartialBatchIsTheMeanOverItsOwnExamples) {
  // 11 examples, global batch 8 split 4 x 2: step 2 holds the last 3 examples (micro-batches of
  // 3 and 0). Its gradient must be the gradient of the mean loss over those 3 examples, the
  // normalisation HF adopted with num_items_in_batch. The reference below is written without
  // the planner: the same weights (one identical full step first), the 3 examples as one
  // batch, normalised by 3, a number written here. Normalising the partial batch by the
  // nominal 8 would scale every element by exactly 3/8; the tolerance (2e-6 of the largest
  // element, see the top) is far below that, and the ratio of the largest magnitudes is
  // checked against 1 as well, so the message names the factor.
  const data::TokenizedDataset dataset = testing::TinyDataset(11);
  const RunResult run = Train(dataset, 4, 2, 2);

  testing::TinyTrainerOptions options;
  options.adam.eps = 1e-4;  // as Train
  options.max_grad_norm = 0;
  testing::TinyTrainer reference(options);
  auto planner = data::BatchPlanner::Create({dataset.size(), 8, 1, 1, 0, 11, true, {}});
  ASSERT_TRUE(planner.ok());
  const std::vector<int64_t> full = planner->GlobalBatch(0, 0);
  const std::vector<int64_t> partial = planner->GlobalBatch(0, 1);
  ASSERT_EQ(full.size(), 8u);
  ASSERT_EQ(partial.size(), 3u);
  EXPECT_FALSE(reference.Step(0, {data::Collate(dataset, full, 1)}, /*global_examples=*/8).skipped);
  EXPECT_FALSE(reference.Step(1, {data::Collate(dataset, partial, 1)}, /*global_examples=*/3).skipped);
  const std::vector<float> expected = reference.gradients();

  const double ratio = MaxAbs(run.grads_per_step[1]) / MaxAbs(expected);
  EXPECT_NEAR(ratio, 1.0, 1e-5) << "the partial-batch gradient is scaled by " << ratio
                                << " (3/8 = 0.375: normalised by the nominal batch)";
  ExpectClose(run.grads_per_step[1], expected, 2e-6 * MaxAbs(expected), "partial-batch gradient");
}

// Token classification: the loss is the mean over the global batch's labelled tokens (HF's
// Trainer with num_items_in_batch), so splitting the batch into micro-steps of different
// token counts gives the gradient of one batch normalised by its labelled tokens, counted
// here by hand. Normalising by the examples instead would scale the gradient by tokens /
// examples (here 14 / 6); normalising each micro-batch by its own tokens would weight the
// micro-batches unequally. Tolerance as above (2e-6 of the largest element).
TEST(AccumulationTest, PerTokenLossIsTheMeanOverTheGlobalBatchsLabelledTokens) {
  testing::TinyTrainerOptions options;
  options.model.task = models::Task::kTokenClassification;
  options.adam.eps = 1e-4;
  options.max_grad_norm = 0;
  const data::TokenizedDataset dataset = testing::TinyTaggedDataset(6);
  int64_t labelled = 0;
  for (int64_t i = 0; i < dataset.size(); ++i) {
    for (int32_t label : dataset.token_labels(i)) labelled += label != data::TokenizedDataset::kIgnored;
  }
  testing::TinyTrainer reference(options);
  EXPECT_FALSE(reference.Step(0, {data::Collate(dataset, {0, 1, 2, 3, 4, 5}, 1)}, labelled).skipped);
  const std::vector<float> expected = reference.gradients();

  testing::TinyTrainer split(options);
  EXPECT_FALSE(split.Step(0, {data::Collate(dataset, {0, 1}, 1), data::Collate(dataset, {2, 3, 4, 5}, 1)}).skipped);
  const std::vector<float> actual = split.gradients();
  const double ratio = MaxAbs(actual) / MaxAbs(expected);
  EXPECT_NEAR(ratio, 1.0, 1e-5) << "the per-token gradient is scaled by " << ratio << " (" << labelled
                                << " labelled tokens, 6 examples)";
  ExpectClose(actual, expected, 2e-6 * MaxAbs(expected), "per-token gradient");
}

}  // namespace
}  // namespace xlmr::train
