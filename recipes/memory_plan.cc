#include "recipes/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/core/status_macros.h"
#include "framework/recompute/plan_report.h"
#include "framework/train/objective.h"
#include "models/encoder/task_head.h"
#include "recipes/common_flags.h"
#include "recipes/rank_memory.h"

namespace xlmr::recipes {
namespace {

using recompute::BlockRecompute;
using recompute::PassMemory;
using recompute::PlannedRecompute;
using recompute::RecomputePlan;

constexpr char kBudgetFlag[] = "activation_memory_budget";

// The request's worst-case pass, as the plan report names it.
recompute::BatchShape ShapeOf(const MemoryPlanRequest& request) {
  if (request.packed.tokens > 0) return {request.packed.sequences, request.max_seq_length, request.packed.tokens};
  return {request.batch_size, request.max_seq_length};
}

recompute::MeasuredPass MeasuredPassOf(const MemoryPlanRequest& request) {
  return {ShapeOf(request), AutocastName(request.autocast)};
}

int64_t KeepAllPeak(const PassMemory& memory) {
  return recompute::EvaluatePlan(memory, RecomputePlan{}).peak_bytes;
}

void PrintFront(const MemoryPlanRequest& request, const PassMemory& memory, const FlatSizes& flat) {
  std::optional<RecomputePlan> chosen;
  std::string budget_line;
  if (request.activation_memory_budget.has_value()) {
    absl::StatusOr<BudgetedPlan> planned = PlanForBudget(request, memory);
    if (planned.ok()) {
      chosen = planned->planned.plan;
      budget_line = recompute::DescribePlan(planned->planned, planned->budget_bytes, memory);
    } else {
      budget_line = std::string(planned.status().message());
    }
  }
  std::printf("%s", recompute::FormatParetoFront(recompute::ParetoFront(memory), memory, MeasuredPassOf(request),
                                                 chosen).c_str());
  if (!budget_line.empty()) std::printf("budget: %s\n", budget_line.c_str());
  // Activations: the budget's plan when it has one, else keeping everything.
  const int64_t activations =
      chosen.has_value() ? recompute::EvaluatePlan(memory, *chosen).peak_bytes : KeepAllPeak(memory);
  std::printf("%s", FormatRankMemory(flat, request.autocast, request.world_size, activations).c_str());
  std::fflush(stdout);
}

}  // namespace

ParameterStore::HalfCopy HalfCopyFor(const MemoryPlanRequest& request) {
  const bool trades_time_for_memory = request.gradient_checkpointing || request.activation_memory_budget.has_value();
  return trades_time_for_memory ? ParameterStore::HalfCopy::kOnDemand : ParameterStore::HalfCopy::kKept;
}

MemoryPlanRequest MemoryPlanRequestFrom(const FinetuneConfig& config, int world_size, PackedMicroBatch packed) {
  MemoryPlanRequest request;
  request.world_size = world_size;
  request.packed = packed;
  request.objective = TrainingObjective(config);
  request.gradient_checkpointing = config.gradient_checkpointing;
  request.activation_memory_budget = config.activation_memory_budget;
  request.print_memory_plan = config.print_memory_plan;
  // A pass's sequences: every text of a micro-batch's rows (sentence embeddings: all columns), or
  // under the cached loss one mini-batch of one column's texts (its activations are all a pass keeps).
  request.batch_size = config.trainer.per_device_train_batch_size * config.trainer.columns_per_row;
  if (config.trainer.cached_mini_batch_size > 0) {
    request.batch_size = std::min(config.trainer.per_device_train_batch_size, config.trainer.cached_mini_batch_size);
  }
  request.max_seq_length = config.max_seq_length;
  request.gradient_accumulation_steps = config.trainer.gradient_accumulation_steps;
  request.autocast = config.trainer.autocast;
  request.seed = config.trainer.seed;
  request.device = config.trainer.device;
  return request;
}

PackedMicroBatch LargestPackedMicroBatch(const data::TokenizedDataset& dataset, int64_t batch_size,
                                         int64_t max_seq_length) {
  XLMR_CHECK(batch_size > 0) << "batch size " << batch_size;
  if (dataset.size() == 0) return {};  // no batches: the trainer refuses the data (batch_planner.h)
  std::vector<int64_t> lengths(static_cast<size_t>(dataset.size()));
  for (int64_t i = 0; i < dataset.size(); ++i) {
    lengths[static_cast<size_t>(i)] = std::min(dataset.num_tokens(i), max_seq_length);
  }
  const size_t taken = static_cast<size_t>(std::min<int64_t>(batch_size, dataset.size()));
  std::partial_sort(lengths.begin(), lengths.begin() + taken, lengths.end(), std::greater<int64_t>());
  return {static_cast<int64_t>(taken), std::accumulate(lengths.begin(), lengths.begin() + taken, int64_t{0})};
}

int64_t HostBatchBytes(const MemoryPlanRequest& request) {
  if (request.device != Device::kCpu) return 0;
  const recompute::BatchShape shape = ShapeOf(request);
  const int64_t inputs = shape.packed() ? shape.tokens() + shape.batch_size + 1 : 2 * shape.tokens();
  int64_t labels = shape.batch_size;
  if (request.objective == train::Objective::kPerToken) labels = shape.tokens();
  if (request.objective == train::Objective::kSpanStartEnd) labels = 2 * shape.batch_size;
  return (inputs + labels) * static_cast<int64_t>(sizeof(int32_t)) * request.gradient_accumulation_steps;
}

recompute::PassMemory MeasureForRequest(const MemoryPlanRequest& request,
                                        train::TrainableModel& model) {
  train::PassContext context;
  context.training = true;
  context.autocast = request.autocast;
  context.seed = request.seed;
  PassMemory memory = model.MeasurePassMemory(ShapeOf(request), context);
  memory.external_bytes = HostBatchBytes(request);
  return memory;
}

absl::StatusOr<BudgetedPlan> PlanForBudget(const MemoryPlanRequest& request,
                                           const PassMemory& memory) {
  XLMR_CHECK(request.activation_memory_budget.has_value()) << "PlanForBudget without a budget";
  const int64_t budget_bytes = request.activation_memory_budget->ToBytes(KeepAllPeak(memory));
  std::optional<PlannedRecompute> planned = recompute::ChooseRecomputePlan(memory, budget_bytes);
  if (!planned.has_value()) {
    return absl::InvalidArgumentError(recompute::DescribeNoPlanFits(
        absl::StrCat("--", kBudgetFlag, "=", request.activation_memory_budget->text), budget_bytes,
        MeasuredPassOf(request), memory));
  }
  return BudgetedPlan{*std::move(planned), budget_bytes};
}

absl::Status ConfigureRecompute(const MemoryPlanRequest& request, train::TrainableModel& model,
                                bool is_main) {
  const bool has_budget = request.activation_memory_budget.has_value();
  if (!has_budget && !request.print_memory_plan) {
    if (request.gradient_checkpointing) {
      model.SetRecomputePlan(RecomputePlan::Uniform(model.num_blocks(), BlockRecompute::kFull));
    }
    return absl::OkStatus();
  }
  const PassMemory memory = MeasureForRequest(request, model);
  if (request.print_memory_plan) {
    if (is_main) {
      const ParameterStore& store = model.parameters();
      const bool kept = HalfCopyFor(request) == ParameterStore::HalfCopy::kKept;
      PrintFront(request, memory, {store.total_elements(), kept ? store.half_window().size : 0});
    }
    return absl::OkStatus();
  }
  XLMR_ASSIGN_OR_RETURN(const BudgetedPlan budgeted, PlanForBudget(request, memory));
  model.SetRecomputePlan(budgeted.planned.plan);
  if (!is_main) return absl::OkStatus();
  if (request.gradient_checkpointing) {
    std::fprintf(stderr, "xlmr_finetune: --%s chooses the recompute plan; --gradient_checkpointing is "
                 "ignored\n", kBudgetFlag);
  }
  std::fprintf(stderr, "xlmr_finetune: batch %s: %s\n", recompute::FormatBatchShape(MeasuredPassOf(request)).c_str(),
               recompute::DescribePlan(budgeted.planned, budgeted.budget_bytes, memory).c_str());
  return absl::OkStatus();
}

}  // namespace xlmr::recipes
