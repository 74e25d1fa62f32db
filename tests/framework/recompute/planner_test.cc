// The budget planner is exact: on random passes (blocks of different sizes) and on passes of
// identical blocks (where many plans tie), its choice for every budget has the least recompute
// that any of the 3^L plans fitting the budget has (the lowest peak among equally cheap ones),
// and its Pareto front is the one found by enumerating every plan.
//
// Integers throughout: costs and peaks are compared exactly.
#include "framework/recompute/planner.h"

#include <random>
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace xlmr::recompute {
namespace {

// A plausible block: input <= selective <= keep; the forward holds at least everything kept
// plus its output; the backward at least everything kept plus the output's gradient.
BlockMemory RandomBlock(std::mt19937_64& rng) {
  auto draw = [&](int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(rng);
  };
  BlockMemory b;
  b.input_bytes = draw(10, 40);
  b.keep_bytes = b.input_bytes + draw(50, 400);
  b.selective_bytes = b.input_bytes + draw(0, b.keep_bytes - b.input_bytes);
  b.forward_peak = b.keep_bytes + b.input_bytes + draw(0, 100);
  b.selective_recompute_peak = b.keep_bytes + draw(0, 50);
  b.backward_peak = b.keep_bytes + b.input_bytes + draw(0, 150);
  b.full_recompute_flops = draw(500, 1500);
  b.selective_recompute_flops = draw(50, b.full_recompute_flops / 2);
  return b;
}

PassMemory RandomPass(int blocks, uint64_t seed) {
  std::mt19937_64 rng(seed);
  PassMemory m;
  m.external_bytes = 3;
  m.inputs_bytes = 5;
  m.embedding_forward_peak = 60;
  m.embedding_resident_bytes = 20;
  m.head_peak = std::uniform_int_distribution<int64_t>(30, 300)(rng);
  m.loss_resident_bytes = 2;
  m.embedding_backward_peak = 50;
  for (int i = 0; i < blocks; ++i) m.blocks.push_back(RandomBlock(rng));
  return m;
}

PassMemory IdenticalBlocksPass(int blocks) {
  PassMemory m = RandomPass(0, 1);
  std::mt19937_64 rng(99);
  m.blocks.assign(static_cast<size_t>(blocks), RandomBlock(rng));
  return m;
}

// Every budget at which the answer can change: each plan's peak, and one byte below it.
std::vector<int64_t> InterestingBudgets(const PassMemory& m) {
  std::set<int64_t> budgets;
  for (const PlannedRecompute& p : ParetoFrontByEnumeration(m)) {
    budgets.insert(p.cost.peak_bytes);
    budgets.insert(p.cost.peak_bytes - 1);
    budgets.insert(p.cost.peak_bytes + 7);
  }
  return {budgets.begin(), budgets.end()};
}

void ExpectPlannerMatchesEnumeration(const PassMemory& m) {
  for (int64_t budget : InterestingBudgets(m)) {
    SCOPED_TRACE(budget);
    const auto planned = ChooseRecomputePlan(m, budget);
    const auto best = ChooseRecomputePlanByEnumeration(m, budget);
    ASSERT_EQ(planned.has_value(), best.has_value());
    if (!planned.has_value()) continue;
    EXPECT_EQ(planned->cost.recompute_flops, best->cost.recompute_flops) << planned->plan.ToString();
    EXPECT_EQ(planned->cost.peak_bytes, best->cost.peak_bytes) << planned->plan.ToString();
    EXPECT_LE(planned->cost.peak_bytes, budget);
    // The reported cost is the plan's own.
    const PlanCost own = EvaluatePlan(m, planned->plan);
    EXPECT_EQ(own.peak_bytes, planned->cost.peak_bytes);
    EXPECT_EQ(own.recompute_flops, planned->cost.recompute_flops);
  }
}

std::vector<std::pair<int64_t, int64_t>> Points(const std::vector<PlannedRecompute>& front) {
  std::vector<std::pair<int64_t, int64_t>> points;
  for (const PlannedRecompute& p : front) points.emplace_back(p.cost.peak_bytes, p.cost.recompute_flops);
  return points;
}

TEST(PlannerTest, ChoiceIsTheCheapestFittingPlanOnRandomPasses) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    ExpectPlannerMatchesEnumeration(RandomPass(4, seed));
  }
  ExpectPlannerMatchesEnumeration(RandomPass(7, 123));
}

TEST(PlannerTest, ChoiceIsTheCheapestFittingPlanWithIdenticalBlocks) {
  for (int blocks : {1, 4, 8}) {
    SCOPED_TRACE(blocks);
    ExpectPlannerMatchesEnumeration(IdenticalBlocksPass(blocks));
  }
}

TEST(PlannerTest, ParetoFrontMatchesEnumeration) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const PassMemory m = RandomPass(5, seed);
    const std::vector<PlannedRecompute> front = ParetoFront(m);
    EXPECT_EQ(Points(front), Points(ParetoFrontByEnumeration(m))) << "seed " << seed;
    // Keep-everything (no recompute) opens the front; each later point trades recompute for memory.
    ASSERT_FALSE(front.empty());
    EXPECT_EQ(front.front().cost.recompute_flops, 0);
    EXPECT_TRUE(front.front().plan.KeepsEverything());
    for (size_t i = 1; i < front.size(); ++i) {
      EXPECT_LT(front[i].cost.peak_bytes, front[i - 1].cost.peak_bytes);
      EXPECT_GT(front[i].cost.recompute_flops, front[i - 1].cost.recompute_flops);
    }
  }
}

TEST(PlannerTest, NoPlanBelowTheLowestPeak) {
  const PassMemory m = RandomPass(4, 5);
  const PlannedRecompute lowest = LowestPeakPlan(m);
  EXPECT_EQ(lowest.cost.peak_bytes, Points(ParetoFrontByEnumeration(m)).back().first);
  EXPECT_TRUE(ChooseRecomputePlan(m, lowest.cost.peak_bytes).has_value());
  EXPECT_FALSE(ChooseRecomputePlan(m, lowest.cost.peak_bytes - 1).has_value());
  EXPECT_FALSE(ChooseRecomputePlan(m, 0).has_value());
}

TEST(PlannerTest, PositionMattersSoTheCheapestFitIsNotGreedy) {
  // Identical blocks, a budget that fits "recompute one block": recomputing the first block
  // helps (it is held through every later phase), recomputing the last one does not.
  PassMemory m = IdenticalBlocksPass(3);
  const int64_t keep_all = EvaluatePlan(m, RecomputePlan{}).peak_bytes;
  const auto planned = ChooseRecomputePlan(m, keep_all - 1);
  ASSERT_TRUE(planned.has_value());
  EXPECT_LT(planned->cost.peak_bytes, keep_all);
  EXPECT_NE(planned->plan.blocks.back(), BlockRecompute::kFull) << planned->plan.ToString();
  EXPECT_GE(EvaluatePlan(m, *ParseRecomputePlan("KKR")).peak_bytes, keep_all);
}

TEST(PlannerTest, ScalesToDeepModels) {
  // XLM-R large has 24 blocks: 3^24 plans, far beyond enumeration; the planner's states stay
  // few because identical blocks give few distinct (held, recompute) pairs.
  const PassMemory m = IdenticalBlocksPass(24);
  const std::vector<PlannedRecompute> front = ParetoFront(m);
  ASSERT_GE(front.size(), 3u);
  EXPECT_EQ(front.back().cost.peak_bytes, LowestPeakPlan(m).cost.peak_bytes);
  for (const PlannedRecompute& p : front) {
    EXPECT_EQ(EvaluatePlan(m, p.plan).peak_bytes, p.cost.peak_bytes) << p.plan.ToString();
  }
}

}  // namespace
}  // namespace xlmr::recompute
