// The activation memory of recompute plans, measured on real training steps of a tiny model
// (MemoryStatsFor(kCpu), kActivations, peaks reset after collation as the trainer does):
//
// - the probe's memory model predicts the measured peak of every plan exactly;
// - full checkpointing holds the block inputs plus one block: adding blocks adds only their
//   inputs to the peak;
// - the budget planner's plan fits the budget in reality, and no plan that fits (in reality,
//   all 3^4 of them measured) recomputes less.
//
// Tolerance: none (bytes are compared exactly). Every allocation's size is a function of the
// batch shape, the CPU backend allocates nothing else under kActivations, and the probe runs
// the same functions as the training pass, so the prediction is exact by construction; a
// mismatch means the probe and the pass have diverged.
//
// The counters are checked against a witness outside them: the tests register a counting
// wrapper around the CPU allocator (recompute_test_util.cc), which sees every tensor byte
// whatever its category, and require its peak over each measured step to equal the activation
// peak (in fp32; under fp16 the CPU backend's widened operands, tagged workspace, may add to
// it, and the allocator's peak must lie between the activation peak and activations plus
// workspace). A buffer the step allocates under another category (gradients, weights, or
// workspace in fp32), which the activation counter alone would not see, breaks that. What no test here can see: host
// memory outside tensors (std::vector scratch, OpenBLAS's own buffers) and GPU memory; the GPU
// pool's peak (peak_reserved_bytes) is compared with PyTorch's by bench/gpu_bench.sh on a GPU.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework/recompute/memory_model.h"
#include "framework/recompute/planner.h"
#include "framework/recompute/recompute_plan.h"
#include "gtest/gtest.h"
#include "tests/models/encoder/recompute_test_util.h"

namespace xlmr::testing {
namespace {

using recompute::BlockRecompute;
using recompute::PassMemory;
using recompute::RecomputePlan;

constexpr int kSeq = 24;  // every example is this long: each batch has the probed shape
constexpr StepShape kShape{4, 2};

// The probe's numbers for `shape` (default: the padded shape of kShape's batches), host
// batches included.
PassMemory Probe(RecomputeTrainer& trainer, bool fp16, const std::vector<data::Batch>& batches,
                 recompute::BatchShape shape = {kShape.per_device_batch, kSeq}) {
  train::PassContext context;
  context.training = true;
  context.autocast = fp16 ? DType::kF16 : DType::kF32;
  PassMemory memory = trainer.model().MeasurePassMemory(shape, context);
  memory.external_bytes = HostBytes(batches);
  return memory;
}

// All 3^L plans.
std::vector<RecomputePlan> AllPlans(int layers) {
  std::vector<RecomputePlan> plans{RecomputePlan{}};
  for (int i = 0; i < layers; ++i) {
    std::vector<RecomputePlan> longer;
    for (const RecomputePlan& plan : plans) {
      for (BlockRecompute mode : {BlockRecompute::kKeep, BlockRecompute::kSelective, BlockRecompute::kFull}) {
        RecomputePlan extended = plan;
        extended.blocks.push_back(mode);
        longer.push_back(extended);
      }
    }
    plans = longer;
  }
  return plans;
}

// One training step under `plan`, measured.
MeasuredStep MeasureStep(int layers, const RecomputeVariant& variant, const RecomputePlan& plan) {
  const data::TokenizedDataset dataset = TinyRecomputeDataset(8, kSeq, /*uniform=*/true);
  RecomputeTrainer trainer(layers, variant);
  trainer.model().SetRecomputePlan(plan);
  return trainer.Step(0, StepBatches(dataset, kShape, 0));
}

// Its measured activation peak.
int64_t MeasuredPeak(int layers, const RecomputeVariant& variant, const RecomputePlan& plan) {
  return MeasureStep(layers, variant, plan).peak_activation_bytes;
}

// Whether the planner may choose every mode of `plan` (kSelective only under eager attention).
bool Offered(const PassMemory& memory, const RecomputePlan& plan) {
  for (size_t i = 0; i < plan.blocks.size(); ++i) {
    if (!recompute::ModeOffered(memory.blocks[i], plan.blocks[i])) return false;
  }
  return true;
}

class RecomputeMemoryTest : public ::testing::TestWithParam<RecomputeVariant> {};

TEST_P(RecomputeMemoryTest, ProbePredictsEveryPlansMeasuredPeakExactly) {
  const RecomputeVariant& variant = GetParam();
  const bool fp16 = variant.fp16;
  const data::TokenizedDataset dataset = TinyRecomputeDataset(8, kSeq, true);
  const std::vector<data::Batch> batches = StepBatches(dataset, kShape, 0);
  RecomputeTrainer prober(3, variant);
  const PassMemory memory = Probe(prober, fp16, batches);
  for (const RecomputePlan& plan : AllPlans(3)) {
    const MeasuredStep measured = MeasureStep(3, variant, plan);
    EXPECT_EQ(measured.peak_activation_bytes, recompute::EvaluatePlan(memory, plan).peak_bytes)
        << "plan " << plan.ToString();
    if (!fp16) {
      EXPECT_EQ(measured.peak_workspace_bytes, 0) << "plan " << plan.ToString();
      EXPECT_EQ(measured.peak_allocated_bytes, measured.peak_activation_bytes)
          << "plan " << plan.ToString() << ": the allocator saw more than the activation counter";
    } else {
      // fp16 on the CPU: the widened operands (kWorkspace, see recompute_test_util.h) are the
      // only other bytes a step may hold on top of its activations.
      EXPECT_LE(measured.peak_allocated_bytes, measured.peak_activation_bytes + measured.peak_workspace_bytes)
          << "plan " << plan.ToString() << ": the allocator saw more than activations + workspace";
      EXPECT_GE(measured.peak_allocated_bytes, measured.peak_activation_bytes) << "plan " << plan.ToString();
    }
  }
}

TEST_P(RecomputeMemoryTest, FullCheckpointingHoldsBlockInputsPlusOneBlock) {
  // With every block recomputed whole, the peak is at most
  //   L * input_bytes                                  the stored block inputs
  //   + max(forward_peak + input_bytes, backward_peak)  one block's full activations, its
  //                                                      recompute/backward temporaries and
  //                                                      the gradient flowing through it
  //   + backward_base + max(head_peak, embedding peaks)  the head's and embeddings' activations
  // and adding blocks adds exactly input_bytes each, where keeping everything adds keep_bytes.
  const RecomputeVariant& variant = GetParam();
  const bool fp16 = variant.fp16;
  const data::TokenizedDataset dataset = TinyRecomputeDataset(8, kSeq, true);
  RecomputeTrainer prober(2, variant);
  const PassMemory memory = Probe(prober, fp16, StepBatches(dataset, kShape, 0));
  const recompute::BlockMemory& block = memory.blocks[0];
  const int64_t one_block = std::max(block.forward_peak + block.input_bytes, block.backward_peak);
  const int64_t head_and_embeddings =
      recompute::BackwardBase(memory) +
      std::max({memory.head_peak, memory.embedding_forward_peak, memory.embedding_backward_peak});
  int64_t full[7] = {}, keep[7] = {};
  for (int layers : {2, 6}) {
    full[layers] = MeasuredPeak(layers, variant, RecomputePlan::Uniform(layers, BlockRecompute::kFull));
    keep[layers] = MeasuredPeak(layers, variant, RecomputePlan::Uniform(layers, BlockRecompute::kKeep));
    EXPECT_LE(full[layers], layers * block.input_bytes + one_block + head_and_embeddings)
        << layers << " layers";
  }
  EXPECT_EQ(full[6] - full[2], 4 * block.input_bytes);
  EXPECT_EQ(keep[6] - keep[2], 4 * block.keep_bytes);
  EXPECT_GT(block.keep_bytes, 4 * block.input_bytes);  // so the per-layer term really shrank
}

TEST_P(RecomputeMemoryTest, BudgetPlanFitsAndNoFittingPlanRecomputesLess) {
  constexpr int kLayers = 4;
  const RecomputeVariant& variant = GetParam();
  const bool fp16 = variant.fp16;
  const data::TokenizedDataset dataset = TinyRecomputeDataset(8, kSeq, true);
  RecomputeTrainer prober(kLayers, variant);
  const PassMemory memory = Probe(prober, fp16, StepBatches(dataset, kShape, 0));
  // Brute force over reality: every plan's measured peak (of the plans the planner may choose:
  // selective recompute only under eager attention).
  std::vector<RecomputePlan> plans;
  for (const RecomputePlan& plan : AllPlans(kLayers)) {
    if (Offered(memory, plan)) plans.push_back(plan);
  }
  EXPECT_EQ(plans.size(), variant.attention == models::AttentionImplementation::kEager ? 81u : 16u);
  std::vector<int64_t> measured;
  for (const RecomputePlan& plan : plans) measured.push_back(MeasuredPeak(kLayers, variant, plan));
  const int64_t keep_all = measured[0];
  const int64_t lowest = *std::min_element(measured.begin(), measured.end());
  ASSERT_LT(lowest, keep_all / 2);
  for (double fraction : {1.0, 0.9, 0.75, 0.6, 0.5}) {
    const int64_t budget = std::max(lowest, static_cast<int64_t>(fraction * keep_all));
    SCOPED_TRACE(budget);
    const std::optional<recompute::PlannedRecompute> chosen = recompute::ChooseRecomputePlan(memory, budget);
    ASSERT_TRUE(chosen.has_value());
    EXPECT_LE(MeasuredPeak(kLayers, variant, chosen->plan), budget) << chosen->plan.ToString();
    for (size_t p = 0; p < plans.size(); ++p) {
      if (measured[p] > budget) continue;
      EXPECT_GE(recompute::EvaluatePlan(memory, plans[p]).recompute_flops, chosen->cost.recompute_flops)
          << plans[p].ToString() << " fits (" << measured[p] << " bytes) and recomputes less than "
          << chosen->plan.ToString();
    }
  }
  EXPECT_FALSE(recompute::ChooseRecomputePlan(memory, lowest - 1).has_value());
}

// --padding_free: a packed probe of B sequences and T tokens (split evenly) predicts exactly
// the measured peak of a packed step whose largest micro-batch holds T tokens split unevenly
// (lengths 3..24): a packed pass's memory is a function of T and B alone, so the planner can
// count tokens (recipes/memory_plan.h). Every plan of 3 blocks, several steps (different
// splits and T). Packed inputs need fused attention (eager variants skip).
TEST_P(RecomputeMemoryTest, PackedProbePredictsPackedStepsOfTheSameTokenCountExactly) {
  const RecomputeVariant& variant = GetParam();
  if (variant.attention != models::AttentionImplementation::kFused) GTEST_SKIP() << "eager attention is padded";
  const data::TokenizedDataset dataset = TinyRecomputeDataset(16, kSeq, /*uniform=*/false);
  for (int step = 0; step < 2; ++step) {
    const std::vector<data::Batch> batches = StepBatches(dataset, kShape, step, /*packed=*/true);
    int64_t largest = 0;
    for (const data::Batch& batch : batches) largest = std::max(largest, batch.input_ids.numel());
    ASSERT_LT(largest, kShape.per_device_batch * kSeq) << "the data must leave the padded worst case";
    RecomputeTrainer prober(3, variant);
    const PassMemory memory = Probe(prober, variant.fp16, batches, {kShape.per_device_batch, kSeq, largest});
    for (const RecomputePlan& plan : AllPlans(3)) {
      RecomputeTrainer trainer(3, variant);
      trainer.model().SetRecomputePlan(plan);
      const MeasuredStep measured = trainer.Step(step, batches);
      EXPECT_EQ(measured.peak_activation_bytes, recompute::EvaluatePlan(memory, plan).peak_bytes)
          << "step " << step << " (" << largest << " tokens), plan " << plan.ToString();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, RecomputeMemoryTest, ::testing::ValuesIn(AllRecomputeVariants()),
                         [](const ::testing::TestParamInfo<RecomputeVariant>& info) {
                           return VariantName(info.param);
                         });

}  // namespace
}  // namespace xlmr::testing
