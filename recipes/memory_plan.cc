#include "recipes/memory_plan.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/core/check.h"
#include "framework/core/status_macros.h"

namespace xlmr::recipes {
namespace {

using recompute::BlockRecompute;
using recompute::PassMemory;
using recompute::PlannedRecompute;
using recompute::RecomputePlan;

constexpr char kBudgetFlag[] = "activation_memory_budget";
constexpr char kLegend[] = "K keep, S selective recompute, R recompute whole";

std::string BatchShape(const MemoryPlanRequest& request) {
  return absl::StrCat("[", request.batch_size, ", ", request.max_seq_length, "]");
}

// The FLOPs of the encoder's forward: what recomputing every block whole costs.
int64_t EncoderForwardFlops(const PassMemory& memory) {
  int64_t flops = 0;
  for (const recompute::BlockMemory& block : memory.blocks) flops += block.full_recompute_flops;
  return flops;
}

// The blocks offer selective recompute exactly when their attention keeps the s^2
// probabilities (eager); the probe records it (memory_model.h).
bool SelectiveOffered(const PassMemory& memory) {
  return !memory.blocks.empty() && memory.blocks.front().selective_offered;
}

const char* AttentionName(const PassMemory& memory) { return SelectiveOffered(memory) ? "eager" : "fused"; }

double ShareOfForward(int64_t flops, const PassMemory& memory) {
  const int64_t forward = EncoderForwardFlops(memory);
  return forward > 0 ? static_cast<double>(flops) / static_cast<double>(forward) : 0.0;
}

int64_t KeepAllPeak(const PassMemory& memory) {
  return recompute::EvaluatePlan(memory, RecomputePlan{}).peak_bytes;
}

absl::Status NoPlanFits(const MemoryPlanRequest& request, const PassMemory& memory, int64_t budget) {
  const PlannedRecompute lowest = recompute::LowestPeakPlan(memory);
  const int64_t smallest = lowest.cost.peak_bytes;
  return absl::InvalidArgumentError(absl::StrFormat(
      "--%s=%s: no recompute plan fits in %s (%d bytes) at batch %s; the smallest predicted "
      "activation peak is %s (%d bytes, %.3f of the keep-everything peak, plan %s): give at least that",
      kBudgetFlag, request.activation_memory_budget->text, recompute::FormatBytes(budget), budget,
      BatchShape(request), recompute::FormatBytes(smallest), smallest,
      static_cast<double>(smallest) / static_cast<double>(KeepAllPeak(memory)),
      lowest.plan.ToString()));
}

void PrintFront(const MemoryPlanRequest& request, const PassMemory& memory) {
  std::optional<RecomputePlan> chosen;
  std::string budget_line;
  if (request.activation_memory_budget.has_value()) {
    absl::StatusOr<BudgetedPlan> planned = PlanForBudget(request, memory);
    if (planned.ok()) {
      chosen = planned->planned.plan;
      budget_line = DescribePlan(*planned, memory);
    } else {
      budget_line = std::string(planned.status().message());
    }
  }
  std::printf("%s", FormatParetoFront(recompute::ParetoFront(memory), memory, request, chosen).c_str());
  if (!budget_line.empty()) std::printf("budget: %s\n", budget_line.c_str());
  std::fflush(stdout);
}

}  // namespace

MemoryPlanRequest MemoryPlanRequestFrom(const FinetuneConfig& config) {
  MemoryPlanRequest request;
  request.gradient_checkpointing = config.gradient_checkpointing;
  request.activation_memory_budget = config.activation_memory_budget;
  request.print_memory_plan = config.print_memory_plan;
  request.batch_size = config.trainer.per_device_train_batch_size;
  request.max_seq_length = config.max_seq_length;
  request.gradient_accumulation_steps = config.trainer.gradient_accumulation_steps;
  request.autocast = train::AutocastDType(config.trainer.fp16, config.trainer.bf16);
  request.seed = config.trainer.seed;
  request.device = config.trainer.device;
  return request;
}

int64_t HostBatchBytes(const MemoryPlanRequest& request) {
  if (request.device != Device::kCpu) return 0;
  const int64_t per_batch = (2 * request.batch_size * request.max_seq_length + request.batch_size) *
                            static_cast<int64_t>(sizeof(int32_t));
  return per_batch * request.gradient_accumulation_steps;
}

recompute::PassMemory MeasureForRequest(const MemoryPlanRequest& request,
                                        train::TrainableModel& model) {
  train::PassContext context;
  context.training = true;
  context.autocast = request.autocast;
  context.seed = request.seed;
  PassMemory memory = model.MeasurePassMemory(request.batch_size, request.max_seq_length, context);
  memory.external_bytes = HostBatchBytes(request);
  return memory;
}

absl::StatusOr<BudgetedPlan> PlanForBudget(const MemoryPlanRequest& request,
                                           const PassMemory& memory) {
  XLMR_CHECK(request.activation_memory_budget.has_value()) << "PlanForBudget without a budget";
  const int64_t budget_bytes = request.activation_memory_budget->ToBytes(KeepAllPeak(memory));
  std::optional<PlannedRecompute> planned = recompute::ChooseRecomputePlan(memory, budget_bytes);
  if (!planned.has_value()) return NoPlanFits(request, memory, budget_bytes);
  return BudgetedPlan{*std::move(planned), budget_bytes};
}

std::string DescribePlan(const BudgetedPlan& budgeted, const PassMemory& memory) {
  const PlannedRecompute& planned = budgeted.planned;
  const int64_t budget_bytes = budgeted.budget_bytes;
  return absl::StrFormat(
      "recompute plan %s (%s): predicted activation peak %s (%d bytes) within the budget of %s "
      "(%d bytes); recompute %.3f GFLOP per micro-step, %.2f of the encoder's forward",
      planned.plan.ToString(), kLegend, recompute::FormatBytes(planned.cost.peak_bytes),
      planned.cost.peak_bytes, recompute::FormatBytes(budget_bytes), budget_bytes,
      static_cast<double>(planned.cost.recompute_flops) / 1e9,
      ShareOfForward(planned.cost.recompute_flops, memory));
}

std::string FormatParetoFront(const std::vector<PlannedRecompute>& front, const PassMemory& memory,
                              const MemoryPlanRequest& request,
                              const std::optional<RecomputePlan>& chosen) {
  std::string text = absl::StrFormat(
      "memory/recompute trade-off (Pareto front) at batch %s, %s, %s attention, %d blocks (%s):\n",
      BatchShape(request), request.autocast == DType::kF16 ? "fp16" : request.autocast == DType::kBF16 ? "bf16" : "fp32", AttentionName(memory), memory.num_blocks(),
      kLegend);
  if (!SelectiveOffered(memory)) {
    text += "  S not offered: fused attention keeps no [batch, heads, seq, seq] probabilities, so "
            "selective recompute has nothing to drop\n";
  }
  absl::StrAppendFormat(&text, "  %-*s  %16s  %12s  %16s  %10s\n", memory.num_blocks() + 1, "plan",
                        "peak_bytes", "peak", "recompute_flops", "of_forward");
  for (const PlannedRecompute& point : front) {
    const bool marked = chosen.has_value() && *chosen == point.plan;
    absl::StrAppendFormat(&text, "%c %-*s  %16d  %12s  %16d  %10.3f\n", marked ? '*' : ' ',
                          memory.num_blocks() + 1, point.plan.ToString(), point.cost.peak_bytes,
                          recompute::FormatBytes(point.cost.peak_bytes), point.cost.recompute_flops,
                          ShareOfForward(point.cost.recompute_flops, memory));
  }
  return text;
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
  if (request.autocast != DType::kF32) model.parameters().EnableHalfCopy(request.autocast);
  const PassMemory memory = MeasureForRequest(request, model);
  if (request.print_memory_plan) {
    if (is_main) PrintFront(request, memory);
    return absl::OkStatus();
  }
  XLMR_ASSIGN_OR_RETURN(const BudgetedPlan budgeted, PlanForBudget(request, memory));
  model.SetRecomputePlan(budgeted.planned.plan);
  if (!is_main) return absl::OkStatus();
  if (request.gradient_checkpointing) {
    std::fprintf(stderr, "xlmr_finetune: --%s chooses the recompute plan; --gradient_checkpointing is "
                 "ignored\n", kBudgetFlag);
  }
  std::fprintf(stderr, "xlmr_finetune: batch %s: %s\n", BatchShape(request).c_str(),
               DescribePlan(budgeted, memory).c_str());
  return absl::OkStatus();
}

}  // namespace xlmr::recipes
