// Activation checkpointing changes memory and time, never numbers: with dropout on, training
// with every block kept, recomputed selectively, recomputed whole, or a mix, gives bit-identical
// losses, gradients and weights, in fp32 and fp16 and with gradient accumulation.
//
// Tolerance: none (bitwise). Recompute regenerates every dropout mask from its counter-based
// key and runs the same kernels on the same inputs in the same order, so on CPU any difference
// at all is a bug (e.g. a mask keyed differently, or a stale saved tensor).
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "framework/recompute/recompute_plan.h"
#include "gtest/gtest.h"
#include "tests/models/encoder/recompute_test_util.h"

namespace xlmr::testing {
namespace {

constexpr int kLayers = 3;
constexpr int kSteps = 3;

struct Trajectory {
  std::vector<double> losses;
  std::vector<std::vector<float>> grads;  // after each step, as it left them (unscaled, clipped)
  std::vector<float> weights;             // fp32 masters after the last step
  int64_t peak_activation_bytes = 0;      // of the first step
};

std::vector<uint32_t> Bits(const std::vector<float>& values) {
  std::vector<uint32_t> bits(values.size());
  if (!values.empty()) std::memcpy(bits.data(), values.data(), values.size() * sizeof(float));
  return bits;
}

// Three optimizer steps of two micro-batches of 4 varied-length (padded) examples.
Trajectory Train(const std::string& plan, const RecomputeVariant& variant, uint64_t dropout_seed = 11) {
  const data::TokenizedDataset dataset = TinyRecomputeDataset(24, 12, /*uniform=*/false);
  RecomputeTrainer trainer(kLayers, variant, dropout_seed);
  auto parsed = recompute::ParseRecomputePlan(plan);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  trainer.model().SetRecomputePlan(*parsed);
  Trajectory t;
  for (int s = 0; s < kSteps; ++s) {
    const MeasuredStep step = trainer.Step(s, StepBatches(dataset, StepShape{4, 2}, s));
    EXPECT_FALSE(step.outcome.skipped) << plan << " step " << s;
    if (s == 0) t.peak_activation_bytes = step.peak_activation_bytes;
    t.losses.push_back(step.outcome.loss);
    t.grads.push_back(trainer.model().parameters().grads().ToFloatVector());
  }
  t.weights = trainer.model().parameters().master().ToFloatVector();
  return t;
}

class RecomputeEquivalenceTest : public ::testing::TestWithParam<RecomputeVariant> {};

TEST_P(RecomputeEquivalenceTest, EveryPlanTrainsBitIdentically) {
  const RecomputeVariant& variant = GetParam();
  const Trajectory reference = Train("KKK", variant);
  for (const std::string plan : {"RRR", "SSS", "KSR", "RSK", "SRS"}) {
    SCOPED_TRACE(plan);
    const Trajectory t = Train(plan, variant);
    for (int s = 0; s < kSteps; ++s) {
      EXPECT_EQ(t.losses[s], reference.losses[s]) << "loss of step " << s;
      EXPECT_EQ(Bits(t.grads[s]), Bits(reference.grads[s])) << "gradients of step " << s;
    }
    EXPECT_EQ(Bits(t.weights), Bits(reference.weights)) << "weights after " << kSteps << " steps";
    // The plan really dropped activations (otherwise the comparison above proves nothing).
    // Under fused attention kSelective drops only the context and the logsumexp and then
    // recomputes the attention forward, which need not lower the peak (the planner never
    // offers it there); only plans without S must.
    if (variant.attention == models::AttentionImplementation::kEager || plan.find('S') == std::string::npos) {
      EXPECT_LT(t.peak_activation_bytes, reference.peak_activation_bytes);
    }
  }
}

TEST_P(RecomputeEquivalenceTest, DropoutIsOnSoMasksMatter) {
  // Another dropout seed changes the losses: the masks that recompute must regenerate are real.
  const RecomputeVariant& variant = GetParam();
  EXPECT_NE(Train("KKK", variant, 11).losses[0], Train("KKK", variant, 12).losses[0]);
}

INSTANTIATE_TEST_SUITE_P(Variants, RecomputeEquivalenceTest, ::testing::ValuesIn(AllRecomputeVariants()),
                         [](const ::testing::TestParamInfo<RecomputeVariant>& info) {
                           return VariantName(info.param);
                         });

}  // namespace
}  // namespace xlmr::testing
