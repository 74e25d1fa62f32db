// framework/ops/step_decisions.h on the CPU against the host-decided code it replaces, bit for
// bit: the loss-scale update against amp::DynamicLossScaler::Update (random overflow sequences,
// growth capped below inf, the min_scale collapse and its error), the unscale and finite flag
// against ops::UnscaleAndCheckFinite / AllFinite, the norm against ops::SumOfSquares, the
// clipping against optim::ClipGradNorm, and AdamW with the device-picked candidate against
// ops::AdamWStep; every pass does nothing when the row says the step skips. (tests/gpu's
// step_decisions_test compares the CUDA kernels with these.)
#include "framework/ops/step_decisions.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "framework/amp/loss_scaler.h"
#include "framework/ops/optim.h"
#include "framework/optim/adamw.h"
#include "framework/optim/grad_clip.h"
#include "framework/tensor/half.h"
#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using kernels::kSlotCandidateError;
using kernels::kSlotCollapsed;
using kernels::kSlotConsecutiveOverflows;
using kernels::kSlotCountBefore;
using kernels::kSlotFoundInf;
using kernels::kSlotGrowthTracker;
using kernels::kSlotOverflowedAt;
using kernels::kSlotScale;
using kernels::kSlotScaleUsed;
using kernels::kSlotSkipped;
using kernels::kSlotSumOfSquares;
using kernels::kSlotUpdateCount;
using kernels::kStepSlots;
using kernels::kStepStateRows;
using testing::RandomValues;
using testing::TensorFrom;

std::vector<uint32_t> Bits(const Tensor& t) {
  std::vector<uint32_t> bits(static_cast<size_t>(t.numel()));
  std::memcpy(bits.data(), t.raw_data(), bits.size() * 4);
  return bits;
}

// A ring whose row `row` holds a started step (scale used `scale`, count before `count`).
Tensor StateWithRow(int row, double scale, double count, double found_inf = 0.0, double sum_of_squares = 0.0) {
  Tensor state = ops::MakeStepState(Device::kCpu);
  std::vector<double> values(kStepSlots, 0.0);
  values[kSlotScale] = scale;
  values[kSlotUpdateCount] = count;
  ops::WriteStepRow(state, (row + kStepStateRows - 1) % kStepStateRows, values);
  ops::BeginStepState(state, row, (row + kStepStateRows - 1) % kStepStateRows, /*loss_terms=*/8);
  std::vector<double> started = ops::ReadStepRow(state, row);
  EXPECT_EQ(started[kSlotScaleUsed], scale);
  EXPECT_EQ(started[kSlotCountBefore], count);
  started[kSlotFoundInf] = found_inf;
  started[kSlotSumOfSquares] = sum_of_squares;
  ops::WriteStepRow(state, row, started);
  return state;
}

// Steps the ring with the given found_inf flags next to a DynamicLossScaler fed the same flags.
void ExpectSameScaleSequence(const amp::LossScalerOptions& options, const std::vector<bool>& overflows) {
  amp::DynamicLossScaler scaler(options, /*enabled=*/true);
  Tensor state = ops::MakeStepState(Device::kCpu);
  std::vector<double> initial(kStepSlots, 0.0);
  initial[kSlotScale] = scaler.scale();
  ops::WriteStepRow(state, kStepStateRows - 1, initial);
  int64_t updates = 0;
  for (size_t s = 0; s < overflows.size(); ++s) {
    const int row = static_cast<int>(s % kStepStateRows);
    ops::BeginStepState(state, row, (row + kStepStateRows - 1) % kStepStateRows, /*loss_terms=*/8);
    if (overflows[s]) {
      std::vector<double> values = ops::ReadStepRow(state, row);
      values[kSlotFoundInf] = 1.0;
      ops::WriteStepRow(state, row, values);
    }
    const float used = scaler.scale();
    const absl::Status status = scaler.Update(!overflows[s]);
    ops::FinishStepState(state, row, scaler.rule());
    const std::vector<double> r = ops::ReadStepRow(state, row);
    ASSERT_EQ(r[kSlotScaleUsed], used) << "step " << s;
    ASSERT_EQ(r[kSlotScale], scaler.scale()) << "step " << s;
    ASSERT_EQ(r[kSlotGrowthTracker], scaler.GetState().growth_tracker) << "step " << s;
    ASSERT_EQ(r[kSlotConsecutiveOverflows], scaler.GetState().consecutive_overflows) << "step " << s;
    updates += overflows[s] ? 0 : 1;
    ASSERT_EQ(r[kSlotUpdateCount], updates) << "step " << s;
    ASSERT_EQ(r[kSlotSkipped], overflows[s] ? 1.0 : 0.0) << "step " << s;
    ASSERT_EQ(r[kSlotCollapsed], status.ok() ? 0.0 : 1.0) << "step " << s;
    if (!status.ok()) {
      EXPECT_EQ(scaler.CollapseError(static_cast<float>(r[kSlotOverflowedAt]),
                                     static_cast<int64_t>(r[kSlotConsecutiveOverflows])),
                status);
      return;
    }
  }
}

TEST(StepDecisionsTest, LossScaleUpdateIsTheScalersOnRandomOverflowSequences) {
  std::mt19937 random(7);
  for (const double growth : {2.0, 1.5, 3.7}) {
    for (const int64_t interval : {1, 3, 2000}) {
      amp::LossScalerOptions options;
      options.init_scale = 1e30;  // grows into float32's limit, which it must never pass
      options.growth_factor = growth;
      options.backoff_factor = 0.37;
      options.growth_interval = interval;
      options.min_scale = 0.0;
      std::vector<bool> overflows(600);
      for (size_t s = 0; s < overflows.size(); ++s) overflows[s] = random() % 5 == 0;
      ExpectSameScaleSequence(options, overflows);
    }
  }
}

TEST(StepDecisionsTest, CollapseBelowMinScaleIsFlaggedWithTheScalersErrorAndThenFreezes) {
  amp::LossScalerOptions options;
  options.init_scale = 64.0;
  options.min_scale = 1.0;
  ExpectSameScaleSequence(options, std::vector<bool>(20, true));  // stops at the collapse
  // After the collapse every step skips, even with finite gradients, and nothing moves.
  amp::DynamicLossScaler scaler(options, true);
  Tensor state = ops::MakeStepState(Device::kCpu);
  std::vector<double> collapsed(kStepSlots, 0.0);
  collapsed[kSlotScale] = 0.5;
  collapsed[kSlotCollapsed] = 1.0;
  collapsed[kSlotUpdateCount] = 4;
  ops::WriteStepRow(state, 0, collapsed);
  ops::BeginStepState(state, 1, 0, /*loss_terms=*/8);
  ops::FinishStepState(state, 1, scaler.rule());
  const std::vector<double> r = ops::ReadStepRow(state, 1);
  EXPECT_EQ(r[kSlotSkipped], 1.0);
  EXPECT_EQ(r[kSlotUpdateCount], 4.0);
  EXPECT_EQ(r[kSlotScale], 0.5);
}

TEST(StepDecisionsTest, DisabledScalerKeepsScaleOneAndStillSkips) {
  amp::DynamicLossScaler scaler(amp::LossScalerOptions{}, /*enabled=*/false);
  Tensor state = StateWithRow(2, 1.0, 3.0, /*found_inf=*/1.0);
  ops::FinishStepState(state, 2, scaler.rule());
  std::vector<double> r = ops::ReadStepRow(state, 2);
  EXPECT_EQ(r[kSlotSkipped], 1.0);
  EXPECT_EQ(r[kSlotScale], 1.0);
  EXPECT_EQ(r[kSlotUpdateCount], 3.0);
  EXPECT_EQ(r[kSlotConsecutiveOverflows], 0.0);
}

TEST(StepDecisionsTest, UnscaleAndFlagIsUnscaleAndCheckFinite) {
  for (const bool with_inf : {false, true}) {
    for (const bool unscale : {true, false}) {
      std::vector<float> values = RandomValues(70001, 3, -3e4f, 3e4f);
      if (with_inf) values[65537] = std::numeric_limits<float>::infinity();
      const double scale = static_cast<float>(3.0e5);
      Tensor expected = TensorFrom({70001}, DType::kF32, values);
      Tensor actual = TensorFrom({70001}, DType::kF32, values);
      const bool finite = unscale ? ops::UnscaleAndCheckFinite(expected, static_cast<float>(1.0 / scale))
                                  : ops::AllFinite(expected);
      Tensor state = StateWithRow(3, scale, 0.0);
      ops::UnscaleAndFlagNonFinite(actual, state, 3, unscale);
      EXPECT_EQ(Bits(actual), Bits(expected)) << "inf " << with_inf << " unscale " << unscale;
      EXPECT_EQ(ops::ReadStepRow(state, 3)[kSlotFoundInf], finite ? 0.0 : 1.0);
    }
  }
}

TEST(StepDecisionsTest, SumOfSquaresIsOpsSumOfSquares) {
  const Tensor grads = TensorFrom({100003}, DType::kF32, RandomValues(100003, 4));
  Tensor state = StateWithRow(0, 1.0, 0.0);
  ops::SumOfSquaresIntoState(grads, state, 0);
  EXPECT_EQ(ops::ReadStepRow(state, 0)[kSlotSumOfSquares], ops::SumOfSquares(grads));
}

TEST(StepDecisionsTest, ClippingIsClipGradNormAndSkipsWithTheStep) {
  for (const float spread : {0.001f, 0.01f, 1.0f}) {
    for (const double max_norm : {0.0, 0.5, 1.0, 3.0}) {
      const std::vector<float> values = RandomValues(40000, 5, -spread, spread);
      Tensor expected = TensorFrom({40000}, DType::kF32, values);
      Tensor actual = TensorFrom({40000}, DType::kF32, values);
      const double sum = ops::SumOfSquares(expected);
      optim::ClipGradNorm(expected, std::sqrt(sum), max_norm);
      Tensor state = StateWithRow(5, 1.0, 0.0, 0.0, sum);
      ops::ClipGradNormWithState(actual, state, 5, max_norm);
      EXPECT_EQ(Bits(actual), Bits(expected)) << "spread " << spread << " max_norm " << max_norm;
      Tensor skipped = TensorFrom({40000}, DType::kF32, values);
      Tensor skipping = StateWithRow(5, 1.0, 0.0, /*found_inf=*/1.0, sum);
      ops::ClipGradNormWithState(skipped, skipping, 5, max_norm);
      EXPECT_EQ(skipped.ToFloatVector(), values);
    }
  }
}

struct AdamWBuffers {
  Tensor param, grad, m, v, half;
  explicit AdamWBuffers(int64_t n)
      : param(TensorFrom({n}, DType::kF32, RandomValues(n, 11))),
        grad(TensorFrom({n}, DType::kF32, RandomValues(n, 12, -0.1f, 0.1f))),
        m(TensorFrom({n}, DType::kF32, RandomValues(n, 13, -0.01f, 0.01f))),
        v(TensorFrom({n}, DType::kF32, RandomValues(n, 14, 0.0f, 1e-4f))),
        half(Tensor::Zeros({n}, DType::kF16)) {}
  std::vector<std::vector<uint32_t>> All() const {
    std::vector<uint32_t> h(static_cast<size_t>(half.numel()));
    for (int64_t i = 0; i < half.numel(); ++i) h[i] = half.data<Half>()[i].bits;
    return {Bits(param), Bits(m), Bits(v), h};
  }
};

TEST(StepDecisionsTest, AdamWPicksTheCandidateOfTheRowsCountAndSkipsWithTheStep) {
  const int64_t n = 5000;
  const std::vector<ops::AdamWDecayRun> runs = {{0, 2000, true}, {2064, 2936, false}};
  optim::AdamWOptions options;
  options.weight_decay = 0.01;
  ops::AdamWCandidates candidates;
  candidates.first_count = 5;
  candidates.count = 3;
  for (int i = 0; i < 3; ++i) candidates.scalars[i] = optim::ComputeAdamWStepScalars(options, 1e-3 * (i + 1), 5 + i);
  // Count before 6: the update is the 7th, candidate 2.
  AdamWBuffers expected(n), actual(n), skipped(n), unmatched(n);
  const auto initial = skipped.All();
  ops::AdamWStep(candidates.scalars[2], runs, expected.param, expected.grad, expected.m, expected.v, &expected.half);
  Tensor state = StateWithRow(1, 1.0, 6.0);
  ops::AdamWStepWithState(candidates, runs, actual.param, actual.grad, actual.m, actual.v, &actual.half, state, 1);
  EXPECT_EQ(actual.All(), expected.All());
  EXPECT_EQ(ops::ReadStepRow(state, 1)[kSlotCandidateError], 0.0);

  Tensor skipping = StateWithRow(1, 1.0, 6.0, /*found_inf=*/1.0);
  ops::AdamWStepWithState(candidates, runs, skipped.param, skipped.grad, skipped.m, skipped.v, &skipped.half, skipping, 1);
  EXPECT_EQ(skipped.All(), initial);

  Tensor beyond = StateWithRow(1, 1.0, 7.0);  // the 8th update: no candidate
  ops::AdamWStepWithState(candidates, runs, unmatched.param, unmatched.grad, unmatched.m, unmatched.v, &unmatched.half, beyond, 1);
  EXPECT_EQ(unmatched.All(), initial);
  EXPECT_EQ(ops::ReadStepRow(beyond, 1)[kSlotCandidateError], 1.0);
}

}  // namespace
}  // namespace xlmr
