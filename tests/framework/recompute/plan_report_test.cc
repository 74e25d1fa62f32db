// What the report says about a pass: every plan of the front in the table with its exact
// bytes and FLOPs, the chosen plan marked, the pass and the attention named in the header, and
// one-line forms that name the plan, the budget, or the smallest budget that would fit.
// Catches a report that drops or mislabels a row, marks the wrong plan, or wraps a line that a
// user's script (or the one-line error contract) reads as one.
#include "framework/recompute/plan_report.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/hand_worked_pass.h"

namespace xlmr::recompute {
namespace {

// The hand-worked pass, its blocks offering selective recompute (eager attention) or not (fused).
PassMemory Pass(bool selective_offered) {
  PassMemory m = testing::HandWorkedPass();
  for (BlockMemory& block : m.blocks) block.selective_offered = selective_offered;
  return m;
}

const MeasuredPass kPass{{8, 128}, "fp16"};

TEST(PlanReportTest, TableListsTheFrontAndMarksTheChosenPlan) {
  const PassMemory memory = Pass(/*selective_offered=*/true);
  const std::vector<PlannedRecompute> front = ParetoFront(memory);
  ASSERT_GE(front.size(), 2u);
  const RecomputePlan chosen = front[1].plan;
  const std::string table = FormatParetoFront(front, memory, kPass, chosen);
  EXPECT_EQ(table.rfind("memory/recompute trade-off (Pareto front) at batch [8, 128], fp16, eager attention, "
                        "2 blocks",
                        0),
            0u)
      << table;
  EXPECT_EQ(table.find("S not offered"), std::string::npos) << table;
  for (const PlannedRecompute& point : front) {
    const char mark = point.plan == chosen ? '*' : ' ';
    EXPECT_NE(table.find(absl::StrCat("\n", std::string(1, mark), " ", point.plan.ToString(), " ")), std::string::npos)
        << point.plan.ToString() << "\n" << table;
    EXPECT_NE(table.find(absl::StrCat(" ", point.cost.peak_bytes, " ")), std::string::npos) << table;
    EXPECT_NE(table.find(absl::StrCat(" ", point.cost.recompute_flops, " ")), std::string::npos) << table;
  }
  int marked_rows = 0;
  for (size_t at = table.find("\n*"); at != std::string::npos; at = table.find("\n*", at + 1)) ++marked_rows;
  EXPECT_EQ(marked_rows, 1) << table;
}

TEST(PlanReportTest, FusedAttentionTableSaysWhySelectiveRecomputeIsNotOffered) {
  const PassMemory memory = Pass(/*selective_offered=*/false);
  const std::string table = FormatParetoFront(ParetoFront(memory), memory, kPass, std::nullopt);
  EXPECT_NE(table.find(", fused attention, "), std::string::npos) << table;
  EXPECT_NE(table.find("\n  S not offered: fused attention keeps no"), std::string::npos) << table;
  EXPECT_EQ(table.find("\n*"), std::string::npos) << "nothing chosen, nothing marked\n" << table;
}

TEST(PlanReportTest, PlanLineNamesThePlanItsPeakTheBudgetAndTheShareOfTheForward) {
  PassMemory memory = Pass(/*selective_offered=*/true);
  for (BlockMemory& block : memory.blocks) block.full_recompute_flops = 3'000'000'000;
  const RecomputePlan every_block = RecomputePlan::Uniform(2, BlockRecompute::kFull);
  const PlannedRecompute planned{every_block, EvaluatePlan(memory, every_block)};
  const std::string line = DescribePlan(planned, 5000, memory);
  EXPECT_EQ(line.rfind("recompute plan RR (K keep, S selective recompute, R recompute whole): predicted "
                       "activation peak ",
                       0),
            0u)
      << line;
  EXPECT_NE(line.find(absl::StrCat("(", planned.cost.peak_bytes, " bytes) within the budget of")), std::string::npos)
      << line;
  EXPECT_NE(line.find("(5000 bytes)"), std::string::npos) << line;
  EXPECT_NE(line.find("recompute 6.000 GFLOP per micro-step, 1.00 of the encoder's forward"), std::string::npos)
      << line;  // every block recomputed whole: the whole forward again
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
}

TEST(PlanReportTest, NoPlanFitsIsOneLineNamingTheSettingAndTheSmallestBudget) {
  const PassMemory memory = Pass(/*selective_offered=*/true);
  const PlannedRecompute lowest = LowestPeakPlan(memory);
  const std::string line = DescribeNoPlanFits("--activation_memory_budget=1KiB", 1024, kPass, memory);
  EXPECT_EQ(line.rfind("--activation_memory_budget=1KiB: no recompute plan fits in 1.00 KiB (1024 bytes) at "
                       "batch [8, 128]; ",
                       0),
            0u)
      << line;
  EXPECT_NE(line.find(absl::StrCat("(", lowest.cost.peak_bytes, " bytes, ")), std::string::npos) << line;
  EXPECT_NE(line.find(absl::StrCat("plan ", lowest.plan.ToString(), "): give at least that")), std::string::npos)
      << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
}

}  // namespace
}  // namespace xlmr::recompute
