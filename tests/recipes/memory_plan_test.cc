// The recipe's memory flags: which plan each combination applies, and the one-line error of a
// budget no plan fits (naming the flag and the smallest budget that would fit); the wording of
// the report is tests/framework/recompute/plan_report_test.cc's. Exact comparisons: plans and
// byte counts are integers.
#include "recipes/memory_plan.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/encoder/init.h"
#include "models/encoder/model.h"

namespace xlmr::recipes {
namespace {

using recompute::BlockRecompute;
using recompute::RecomputePlan;

models::EncoderConfig TinyConfig() {
  models::EncoderConfig c;
  c.vocab_size = 40;
  c.hidden_size = 16;
  c.num_hidden_layers = 4;
  c.num_attention_heads = 4;
  c.intermediate_size = 32;
  c.max_position_embeddings = 40;
  c.type_vocab_size = 1;
  c.hidden_dropout_prob = 0.1;
  c.attention_probs_dropout_prob = 0.1;
  c.id2label = {"a", "b"};
  return c;
}

// `budget`: the flag's text as a user writes it; empty: no budget.
MemoryPlanRequest Request(const std::string& budget) {
  MemoryPlanRequest r;
  if (!budget.empty()) {
    absl::StatusOr<recompute::MemoryBudget> parsed =
        recompute::ParseMemoryBudget(budget, "activation_memory_budget");
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (parsed.ok()) r.activation_memory_budget = *parsed;
  }
  r.batch_size = 4;
  r.max_seq_length = 24;
  r.gradient_accumulation_steps = 2;
  return r;
}

class MemoryPlanTest : public ::testing::Test {
 protected:
  MemoryPlanTest() : model_(TinyConfig(), Device::kCpu) { models::InitializeAllWeights(model_, 1); }
  models::EncoderModel model_;
};

TEST_F(MemoryPlanTest, NoFlagKeepsEverythingAndGradientCheckpointingRecomputesEveryBlock) {
  ASSERT_TRUE(ConfigureRecompute(Request(""), model_, false).ok());
  EXPECT_TRUE(model_.recompute_plan().KeepsEverything());
  MemoryPlanRequest request = Request("");
  request.gradient_checkpointing = true;
  ASSERT_TRUE(ConfigureRecompute(request, model_, false).ok());
  EXPECT_EQ(model_.recompute_plan().ToString(), "RRRR");
}

TEST_F(MemoryPlanTest, HostBatchesCountOnCpuOnly) {
  MemoryPlanRequest request = Request("");
  EXPECT_EQ(HostBatchBytes(request), 2 * (2 * 4 * 24 + 4) * 4);  // ids, mask, labels; 2 micro-steps
  request.device = Device::kCuda;
  EXPECT_EQ(HostBatchBytes(request), 0);
}

TEST_F(MemoryPlanTest, BudgetAppliesThePlannersChoiceAndWinsOverGradientCheckpointing) {
  MemoryPlanRequest request = Request("0.7");
  const recompute::PassMemory memory = MeasureForRequest(request, model_);
  EXPECT_EQ(memory.external_bytes, HostBatchBytes(request));
  const int64_t keep_all = recompute::EvaluatePlan(memory, RecomputePlan{}).peak_bytes;
  const auto expected = recompute::ChooseRecomputePlan(memory, static_cast<int64_t>(0.7 * keep_all));
  ASSERT_TRUE(expected.has_value());
  ASSERT_NE(expected->plan.ToString(), "RRRR");  // so that "the budget wins" is visible below
  request.gradient_checkpointing = true;
  ASSERT_TRUE(ConfigureRecompute(request, model_, false).ok());
  EXPECT_EQ(model_.recompute_plan(), expected->plan);
}

TEST_F(MemoryPlanTest, InfeasibleBudgetNamesTheFlagAndTheSmallestBudgetThatFits) {
  const MemoryPlanRequest request = Request("1KiB");
  const absl::Status status = ConfigureRecompute(request, model_, false);
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  const std::string message(status.message());
  EXPECT_EQ(message.rfind("--activation_memory_budget=1KiB: no recompute plan fits", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos);
  const int64_t smallest =
      recompute::LowestPeakPlan(MeasureForRequest(request, model_)).cost.peak_bytes;
  EXPECT_NE(message.find(absl::StrCat("(", smallest, " bytes")), std::string::npos) << message;
  // That budget fits; one byte less does not.
  EXPECT_TRUE(PlanForBudget(Request(absl::StrCat(smallest)), MeasureForRequest(request, model_)).ok());
  EXPECT_FALSE(PlanForBudget(Request(absl::StrCat(smallest - 1)), MeasureForRequest(request, model_)).ok());
}

}  // namespace
}  // namespace xlmr::recipes
