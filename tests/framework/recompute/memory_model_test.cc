// The memory model's peak of a plan, against the formula worked by hand for a 2-block pass
// with distinct numbers (so a term taken from the wrong phase shows). Exact integers.
#include "framework/recompute/memory_model.h"

#include "gtest/gtest.h"
#include "tests/testing/hand_worked_pass.h"

namespace xlmr::recompute {
namespace {

using testing::HandWorkedPass;  // its numbers, and the bases and fixed peak they give, are in its header

PlanCost Evaluate(const char* plan) {
  auto parsed = ParseRecomputePlan(plan);
  EXPECT_TRUE(parsed.ok());
  return EvaluatePlan(HandWorkedPass(), *parsed);
}

TEST(MemoryModelTest, BasesAndFixedPhases) {
  const PassMemory m = HandWorkedPass();
  EXPECT_EQ(ForwardBase(m), 7);
  EXPECT_EQ(BackwardBase(m), 10);
  EXPECT_EQ(FixedPhasesPeak(m), 33);  // max(1 + 2 + 30, 10 + 20)
  EXPECT_EQ(HeldBytes(m.blocks[0], BlockRecompute::kSelective), 40);
  EXPECT_EQ(RecomputeFlops(m.blocks[0], BlockRecompute::kKeep), 0);
}

TEST(MemoryModelTest, KeepEverything) {
  // Block 1's backward: backward_base 10 + block 0 keeps 100 + backward peak 160 = 270
  // (its forward: 7 + 100 + 150 = 257; the head: 7 + 200 + 50 = 257).
  EXPECT_EQ(Evaluate("KK").peak_bytes, 270);
  EXPECT_EQ(Evaluate("KK").recompute_flops, 0);
  EXPECT_EQ(EvaluatePlan(HandWorkedPass(), RecomputePlan{}).peak_bytes, 270);  // empty = keep all
}

TEST(MemoryModelTest, RecomputeEverything) {
  // Block 1: forward 7 + 10 + 150 = 167; recompute 10 + 10 + (150 + 10) = 180; backward
  // 10 + 10 + 160 = 180. Block 0: recompute 10 + 0 + 160 = 170.
  EXPECT_EQ(Evaluate("RR").peak_bytes, 180);
  EXPECT_EQ(Evaluate("RR").recompute_flops, 2000);
}

TEST(MemoryModelTest, SelectiveAndMixedPlans) {
  // SS: block 1 forward 7 + 40 + 150 = 197, backward 10 + 40 + max(70 + 10, 160) = 210.
  EXPECT_EQ(Evaluate("SS").peak_bytes, 210);
  EXPECT_EQ(Evaluate("SS").recompute_flops, 200);
  // RK: block 1 backward 10 + 10 + 160 = 180; head 7 + 110 + 50 = 167.
  EXPECT_EQ(Evaluate("RK").peak_bytes, 180);
  // KR: recomputing the last block saves nothing: block 0 is held through block 1's backward.
  EXPECT_EQ(Evaluate("KR").peak_bytes, 270);
  EXPECT_EQ(Evaluate("KR").recompute_flops, 1000);
}

TEST(MemoryModelTest, HeadCanBeThePeak) {
  PassMemory m = HandWorkedPass();
  m.head_peak = 400;  // RR: 7 + 20 + 400
  EXPECT_EQ(EvaluatePlan(m, RecomputePlan::Uniform(2, BlockRecompute::kFull)).peak_bytes, 427);
}

}  // namespace
}  // namespace xlmr::recompute
