// framework/ops/step_decisions.h on the CPU against the host-decided code it replaces, bit for
// bit: the loss-scale update against amp::DynamicLossScaler::Update (random overflow sequences,
// growth capped below inf, the min_scale collapse and its error); pass 1's flag and norm
// against ops::UnscaleAndCheckFinite / AllFinite and ops::SumOfSquares; pass 2 against unscaling,
// optim::ClipGradNorm and ops::AdamWStep in place, with the device-picked candidate; a step the
// row says skips updates nothing, and pass 2 always leaves the gradients zeroed. (tests/gpu's
// step_decisions_test compares the CUDA kernels with these.)
#include "framework/ops/step_decisions.h"

#include <algorithm>
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

ops::AdamWCandidates ThreeCandidates() {
  optim::AdamWOptions options;
  options.weight_decay = 0.01;
  ops::AdamWCandidates candidates;
  candidates.first_count = 5;
  candidates.count = 3;
  for (int i = 0; i < 3; ++i) candidates.scalars[i] = optim::ComputeAdamWStepScalars(options, 1e-3 * (i + 1), 5 + i);
  return candidates;
}

// Writes row `row`'s StepInputs (ThreeCandidates, 8 loss terms) and starts it from `previous`.
void Begin(Tensor& state, int row, int previous) {
  kernels::StepInputs inputs;
  inputs.candidates = ThreeCandidates();
  inputs.loss_terms = 8;
  ops::WriteStepInputs(state, row, inputs);
  ops::BeginStepState(state, row, previous);
}

// A ring whose row `row` holds a started step (scale used `scale`, count before `count`).
Tensor StateWithRow(int row, double scale, double count, double found_inf = 0.0, double sum_of_squares = 0.0) {
  Tensor state = ops::MakeStepState(Device::kCpu);
  std::vector<double> values(kStepSlots, 0.0);
  values[kSlotScale] = scale;
  values[kSlotUpdateCount] = count;
  ops::WriteStepRow(state, (row + kStepStateRows - 1) % kStepStateRows, values);
  Begin(state, row, (row + kStepStateRows - 1) % kStepStateRows);
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
    Begin(state, row, (row + kStepStateRows - 1) % kStepStateRows);
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
  Begin(state, 1, 0);
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

// Pass 1 reads the raw gradients once: the flag of UnscaleAndCheckFinite (AllFinite without the
// scaler) and SumOfSquares of the unscaled values, the gradients left as they were.
TEST(StepDecisionsTest, FlagAndSumAreUnscaleAndCheckFiniteThenSumOfSquares) {
  for (const bool with_inf : {false, true}) {
    for (const bool unscale : {true, false}) {
      std::vector<float> values = RandomValues(100003, 3, -3e4f, 3e4f);
      if (with_inf) values[65537] = std::numeric_limits<float>::infinity();
      const double scale = static_cast<float>(3.0e5);
      Tensor expected = TensorFrom({100003}, DType::kF32, values);
      const Tensor raw = TensorFrom({100003}, DType::kF32, values);
      const bool finite = unscale ? ops::UnscaleAndCheckFinite(expected, static_cast<float>(1.0 / scale))
                                  : ops::AllFinite(expected);
      Tensor state = StateWithRow(3, scale, 0.0);
      ops::FlagNonFiniteAndSumSquares(raw, state, 3, unscale);
      const std::vector<double> row = ops::ReadStepRow(state, 3);
      EXPECT_EQ(row[kSlotFoundInf], finite ? 0.0 : 1.0) << "inf " << with_inf << " unscale " << unscale;
      if (finite) { EXPECT_EQ(row[kSlotSumOfSquares], ops::SumOfSquares(expected)) << "unscale " << unscale; }
      EXPECT_EQ(raw.ToFloatVector(), values) << "pass 1 wrote the gradients";
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


// Pass 2 on raw gradients is the in-place sequence it replaces: unscale, clip to the row's norm,
// AdamW with the candidate of the row's count (count before 6: the 7th update, candidate 2);
// every gradient is 0 afterwards.
TEST(StepDecisionsTest, AdamWFromRawGradientsIsUnscaleClipAndAdamW) {
  const int64_t n = 5000;
  const std::vector<ops::AdamWDecayRun> runs = {{0, 2000, true}, {2064, 2936, false}};
  const ops::AdamWCandidates candidates = ThreeCandidates();
  const double scale = 1024.0;
  for (const bool unscale : {true, false}) {
    for (const double max_norm : {0.0, 0.05, 1e3}) {
      AdamWBuffers expected(n), actual(n);
      // The padding between the runs is never written by a backward: zero, as in a store.
      for (Tensor* g : {&expected.grad, &actual.grad}) std::fill_n(g->data<float>() + 2000, 64, 0.0f);
      if (unscale) ops::UnscaleAndCheckFinite(expected.grad, static_cast<float>(1.0 / scale));
      const double sum = ops::SumOfSquares(expected.grad);
      optim::ClipGradNorm(expected.grad, std::sqrt(sum), max_norm);
      ops::AdamWStep(candidates.scalars[2], runs, expected.param, expected.grad, expected.m, expected.v, &expected.half);
      Tensor state = StateWithRow(1, scale, 6.0);
      ops::FlagNonFiniteAndSumSquares(actual.grad, state, 1, unscale);
      ops::AdamWStepWithState(runs, actual.param, actual.grad, actual.m, actual.v, &actual.half, state, 1,
                              {unscale, max_norm});
      EXPECT_EQ(actual.All(), expected.All()) << "unscale " << unscale << " max_norm " << max_norm;
      EXPECT_EQ(actual.grad.ToFloatVector(), std::vector<float>(n, 0.0f));
      EXPECT_EQ(ops::ReadStepRow(state, 1)[kSlotCandidateError], 0.0);
    }
  }
}

TEST(StepDecisionsTest, AdamWSkipsWithTheStepAndStillClearsTheGradients) {
  const int64_t n = 5000;
  const std::vector<ops::AdamWDecayRun> runs = {{0, 2000, true}, {2064, 2936, false}};
  AdamWBuffers skipped(n), unmatched(n);
  const auto initial = skipped.All();
  Tensor skipping = StateWithRow(1, 1.0, 6.0, /*found_inf=*/1.0);
  ops::AdamWStepWithState(runs, skipped.param, skipped.grad, skipped.m, skipped.v, &skipped.half,
                          skipping, 1, {true, 1.0});
  EXPECT_EQ(skipped.All(), initial);
  EXPECT_EQ(skipped.grad.ToFloatVector(), std::vector<float>(n, 0.0f));
  EXPECT_EQ(ops::ReadStepRow(skipping, 1)[kSlotCandidateError], 0.0);

  Tensor beyond = StateWithRow(1, 1.0, 7.0);  // the 8th update: no candidate
  ops::AdamWStepWithState(runs, unmatched.param, unmatched.grad, unmatched.m, unmatched.v,
                          &unmatched.half, beyond, 1, {true, 1.0});
  EXPECT_EQ(unmatched.All(), initial);
  EXPECT_EQ(ops::ReadStepRow(beyond, 1)[kSlotCandidateError], 1.0);
  EXPECT_EQ(unmatched.grad.ToFloatVector(), std::vector<float>(n, 0.0f));
}

}  // namespace
}  // namespace xlmr
