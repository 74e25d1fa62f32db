// The CUDA step decisions (kernels/cuda/optim.h's "with the device step state" section, reached
// through framework/ops/step_decisions.h) against the CPU ones, which tests/framework/ops's
// step_decisions_test holds to the host code they replaced:
//   output                                   | bound
//   -----------------------------------------+----------------------------------------------
//   state rows (scale update, skip, count)   | bit-equal: step_state.h's double/float
//                                            | arithmetic, correctly rounded on both
//   pass 1: found_inf, raw gradients         | flag equal, gradients not written
//   pass 1: sum of squares into the row      | bit-equal to kernels::cuda::SumOfSquares of the
//                                            | unscaled values (the same reduction)
//   pass 2: AdamW on unscaled, clipped raw   | bit-equal (same row: same coefficient; the
//   gradients with the picked candidate      | tests/gpu/optim_test's AdamW bounds), gradients 0
//   a skipping row                           | nothing written (the half copy included)
// and TrainStep on CUDA read a step late equals TrainStep read at once, bit for bit.
// Skipped (with the reason) when no GPU is visible.
#include "framework/ops/step_decisions.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "framework/amp/loss_scaler.h"
#include "framework/optim/adamw.h"
#include "gtest/gtest.h"
#include "kernels/cuda/optim.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/testing/tiny_xlmr.h"

namespace xlmr {
namespace {

using kernels::kStepSlots;
using kernels::kStepStateRows;
using testing::ExpectBitEqual;
using testing::GpuTest;
using testing::OnGpu;
using testing::RandomTensor;

using StepDecisionsGpuTest = GpuTest;

ops::AdamWCandidates OneCandidate() {
  ops::AdamWCandidates candidates;
  candidates.count = 1;
  return candidates;
}

// Writes row `row`'s StepInputs (`candidates`, 8 loss terms) and starts it from `previous`.
void BeginWithInputs(Tensor& state, int row, int previous, const ops::AdamWCandidates& candidates = OneCandidate()) {
  kernels::StepInputs inputs;
  inputs.candidates = candidates;
  inputs.loss_terms = 8;
  ops::WriteStepInputs(state, row, inputs);
  ops::BeginStepState(state, row, previous);
}

// The same ring on both devices, row `row` started from scale `scale`, count `count`.
struct Rings {
  Tensor cpu = ops::MakeStepState(Device::kCpu);
  Tensor gpu = ops::MakeStepState(Device::kCuda);
  Rings(int row, double scale, double count, double found_inf = 0.0,
        const ops::AdamWCandidates& candidates = OneCandidate()) {
    std::vector<double> previous(kStepSlots, 0.0);
    previous[kernels::kSlotScale] = scale;
    previous[kernels::kSlotUpdateCount] = count;
    const int p = (row + kStepStateRows - 1) % kStepStateRows;
    for (Tensor* t : {&cpu, &gpu}) {
      ops::WriteStepRow(*t, p, previous);
      BeginWithInputs(*t, row, p, candidates);
      std::vector<double> values = ops::ReadStepRow(*t, row);
      values[kernels::kSlotFoundInf] = found_inf;
      ops::WriteStepRow(*t, row, values);
    }
  }
  void ExpectSameRow(int row) const {
    const std::vector<double> a = ops::ReadStepRow(gpu, row), b = ops::ReadStepRow(cpu, row);
    for (int s = 0; s < kStepSlots; ++s) EXPECT_EQ(a[s], b[s]) << "slot " << s;
  }
};

TEST_F(StepDecisionsGpuTest, ScaleUpdatesAndSkipsAreTheCpus) {
  amp::LossScalerOptions options;
  options.init_scale = 1e30;
  options.growth_interval = 2;
  options.backoff_factor = 0.37;
  options.min_scale = 1e20;  // collapses somewhere in the sequence
  amp::DynamicLossScaler scaler(options, true);
  Rings rings(kStepStateRows - 1, static_cast<float>(1e30), 0.0);
  std::mt19937 random(3);
  for (int s = 0; s < 300; ++s) {
    const int row = s % kStepStateRows;
    const int previous = (row + kStepStateRows - 1) % kStepStateRows;
    const bool overflow = random() % 4 == 0;
    for (Tensor* t : {&rings.cpu, &rings.gpu}) {
      BeginWithInputs(*t, row, previous);
      std::vector<double> values = ops::ReadStepRow(*t, row);
      values[kernels::kSlotFoundInf] = overflow ? 1.0 : 0.0;
      ops::WriteStepRow(*t, row, values);
      ops::FinishStepState(*t, row, scaler.rule());
    }
    rings.ExpectSameRow(row);
  }
}

TEST_F(StepDecisionsGpuTest, FlagAndNormOfRawGradientsAreTheCpus) {
  for (const bool with_inf : {false, true}) {
    for (const bool unscale : {true, false}) {
      Tensor cpu = RandomTensor({300001}, DType::kF32, 5, 3e3f);
      if (with_inf) cpu.data<float>()[123457] = std::numeric_limits<float>::infinity();
      Tensor gpu = OnGpu(cpu);
      Rings rings(2, static_cast<float>(65536.0 * 3), 0.0);
      ops::FlagNonFiniteAndSumSquares(cpu, rings.cpu, 2, unscale);
      ops::FlagNonFiniteAndSumSquares(gpu, rings.gpu, 2, unscale);
      ExpectBitEqual("raw gradients, not written", gpu, cpu);
      const std::vector<double> row = ops::ReadStepRow(rings.gpu, 2);
      EXPECT_EQ(row[kernels::kSlotFoundInf], with_inf ? 1.0 : 0.0);
      if (with_inf) continue;  // the sums are inf/NaN, and the step skips
      // The GPU's sum: SumOfSquares of the unscaled values in its own order.
      Tensor unscaled = OnGpu(cpu);
      if (unscale) kernels::cuda::UnscaleAndCheckFinite(unscaled, kernels::InverseScaleOf(row.data()));
      EXPECT_EQ(row[kernels::kSlotSumOfSquares], kernels::cuda::SumOfSquares(unscaled));
    }
  }
}

TEST_F(StepDecisionsGpuTest, AdamWWithTheDevicePickedCandidateIsTheCpus) {
  const int64_t n = 70000;
  const std::vector<ops::AdamWDecayRun> runs = {{0, 30000, true}, {30064, 39936, false}};
  optim::AdamWOptions options;
  options.weight_decay = 0.01;
  ops::AdamWCandidates candidates;
  candidates.first_count = 3;
  candidates.count = 4;
  for (int i = 0; i < 4; ++i) candidates.scalars[i] = optim::ComputeAdamWStepScalars(options, 1e-3 * (i + 1), 3 + i);
  for (const double found_inf : {0.0, 1.0}) {
    Tensor p = RandomTensor({n}, DType::kF32, 1), g = RandomTensor({n}, DType::kF32, 2, 0.1f);
    Tensor m = RandomTensor({n}, DType::kF32, 3, 0.01f), v = RandomTensor({n}, DType::kF32, 4, 1e-3f, 2e-3f);
    Tensor h = Tensor::Zeros({n}, DType::kF16);
    Tensor gp = OnGpu(p), gg = OnGpu(g), gm = OnGpu(m), gv = OnGpu(v), gh = OnGpu(h);
    const Tensor p0 = OnGpu(p);
    std::fill_n(g.data<float>() + 30000, 64, 0.0f);  // the store's padding: never written
    gg = OnGpu(g);
    Rings rings(4, 1024.0, 4.0, found_inf, candidates);  // count before 4: the 5th update, candidate 2
    // The same row on both sides (the CPU's norm): the same clip coefficient.
    ops::FlagNonFiniteAndSumSquares(g, rings.cpu, 4, true);
    ops::WriteStepRow(rings.gpu, 4, ops::ReadStepRow(rings.cpu, 4));
    ops::AdamWStepWithState(runs, p, g, m, v, &h, rings.cpu, 4, {true, 0.05});
    ops::AdamWStepWithState(runs, gp, gg, gm, gv, &gh, rings.gpu, 4, {true, 0.05});
    ExpectBitEqual("gradients, cleared", gg, g);
    ExpectBitEqual("param", gp, p);
    ExpectBitEqual("exp_avg", gm, m);
    ExpectBitEqual("exp_avg_sq", gv, v);
    ExpectBitEqual("half copy", gh, h);
    if (found_inf != 0.0) ExpectBitEqual("param of a skipped step", gp, p0);
    rings.ExpectSameRow(4);
  }
}

TEST_F(StepDecisionsGpuTest, TrainStepReadLateIsTrainStepReadAtOnce) {
  testing::TinyTrainerOptions o;
  o.device = Device::kCuda;
  o.autocast = DType::kF16;
  o.loss_scale = 1e9;
  o.loss_scale_growth_interval = 2;
  o.lr_schedule = "linear";
  o.warmup_steps = 10;
  o.total_steps = 40;
  o.max_grad_norm = 0.05;
  testing::TinyTrainer now(o), late(o);
  const data::TokenizedDataset dataset = testing::TinyDataset(48);
  int skipped = 0;
  for (int step = 0; step < 40; step += 4) {
    std::vector<train::StepOutcome> expected;
    for (int i = 0; i < 4; ++i) {
      const std::vector<data::Batch> batch = {testing::TinyBatch(dataset, ((step + i) * 6) % 42, 6)};
      expected.push_back(now.Step(step + i, batch));
      late.train_step().Enqueue(step + i, batch, 6);
    }
    for (int i = 0; i < 4; ++i) {
      absl::StatusOr<train::StepOutcome> outcome = late.train_step().Collect();
      ASSERT_TRUE(outcome.ok()) << outcome.status();
      EXPECT_EQ(outcome->loss, expected[i].loss);
      EXPECT_EQ(outcome->skipped, expected[i].skipped);
      EXPECT_EQ(outcome->grad_norm, expected[i].grad_norm);
      EXPECT_EQ(outcome->loss_scale, expected[i].loss_scale);
      EXPECT_EQ(outcome->learning_rate, expected[i].learning_rate);
      skipped += expected[i].skipped ? 1 : 0;
    }
  }
  EXPECT_GE(skipped, 5);
  ExpectBitEqual("weights", late.model().parameters().master(), now.model().parameters().master());
  EXPECT_EQ(late.optimizer().step_count(), now.optimizer().step_count());
}

}  // namespace
}  // namespace xlmr
