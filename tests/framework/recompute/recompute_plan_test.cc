// The written form of a recompute plan ("KSR..") and its per-block queries.
#include "framework/recompute/recompute_plan.h"

#include "gtest/gtest.h"

namespace xlmr::recompute {
namespace {

TEST(RecomputePlanTest, WritesAndParsesOneLetterPerBlock) {
  const RecomputePlan plan{{BlockRecompute::kKeep, BlockRecompute::kKeep, BlockRecompute::kSelective,
                            BlockRecompute::kSelective, BlockRecompute::kFull, BlockRecompute::kFull}};
  EXPECT_EQ(plan.ToString(), "KKSSRR");
  auto parsed = ParseRecomputePlan("KKSSRR");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, plan);
  EXPECT_EQ(RecomputePlan::Uniform(3, BlockRecompute::kFull).ToString(), "RRR");
}

TEST(RecomputePlanTest, EmptyPlanKeepsEveryBlock) {
  const RecomputePlan empty;
  EXPECT_EQ(empty.ModeOf(0), BlockRecompute::kKeep);
  EXPECT_EQ(empty.ModeOf(11), BlockRecompute::kKeep);
  EXPECT_TRUE(empty.KeepsEverything());
  EXPECT_TRUE(RecomputePlan::Uniform(4, BlockRecompute::kKeep).KeepsEverything());
  EXPECT_FALSE(ParseRecomputePlan("KKS")->KeepsEverything());
  EXPECT_EQ(ParseRecomputePlan("KSR")->ModeOf(1), BlockRecompute::kSelective);
}

TEST(RecomputePlanTest, BadLetterIsNamedWithItsPosition) {
  const auto parsed = ParseRecomputePlan("KSx");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("position 2"), absl::string_view::npos) << parsed.status();
  EXPECT_NE(parsed.status().message().find("'x'"), absl::string_view::npos) << parsed.status();
  EXPECT_FALSE(ParseRecomputePlan("kkk").ok());  // letters are upper case
}

}  // namespace
}  // namespace xlmr::recompute
