#include "framework/recompute/plan_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/recompute/memory_budget.h"

namespace xlmr::recompute {
namespace {

constexpr char kLegend[] = "K keep, S selective recompute, R recompute whole";

// The FLOPs of the encoder's forward: what recomputing every block whole costs.
int64_t EncoderForwardFlops(const PassMemory& memory) {
  int64_t flops = 0;
  for (const BlockMemory& block : memory.blocks) flops += block.full_recompute_flops;
  return flops;
}

double ShareOfForward(int64_t flops, const PassMemory& memory) {
  const int64_t forward = EncoderForwardFlops(memory);
  return forward > 0 ? static_cast<double>(flops) / static_cast<double>(forward) : 0.0;
}

// The blocks offer selective recompute exactly when their attention keeps the s^2
// probabilities (eager); the probe records it (memory_model.h).
bool SelectiveOffered(const PassMemory& memory) {
  return !memory.blocks.empty() && memory.blocks.front().selective_offered;
}

const char* AttentionName(const PassMemory& memory) { return SelectiveOffered(memory) ? "eager" : "fused"; }

}  // namespace

std::string FormatBatchShape(const MeasuredPass& pass) {
  const BatchShape& shape = pass.shape;
  if (shape.packed()) return absl::StrCat("[", shape.batch_size, " sequences, ", shape.packed_tokens, " tokens packed]");
  return absl::StrCat("[", shape.batch_size, ", ", shape.sequence_length, "]");
}

std::string DescribePlan(const PlannedRecompute& planned, int64_t budget_bytes, const PassMemory& memory) {
  return absl::StrFormat(
      "recompute plan %s (%s): predicted activation peak %s (%d bytes) within the budget of %s "
      "(%d bytes); recompute %.3f GFLOP per micro-step, %.2f of the encoder's forward",
      planned.plan.ToString(), kLegend, FormatBytes(planned.cost.peak_bytes), planned.cost.peak_bytes,
      FormatBytes(budget_bytes), budget_bytes, static_cast<double>(planned.cost.recompute_flops) / 1e9,
      ShareOfForward(planned.cost.recompute_flops, memory));
}

std::string FormatParetoFront(const std::vector<PlannedRecompute>& front, const PassMemory& memory,
                              const MeasuredPass& pass, const std::optional<RecomputePlan>& chosen) {
  std::string text = absl::StrFormat(
      "memory/recompute trade-off (Pareto front) at batch %s, %s, %s attention, %d blocks (%s):\n",
      FormatBatchShape(pass), pass.precision, AttentionName(memory), memory.num_blocks(), kLegend);
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
                          FormatBytes(point.cost.peak_bytes), point.cost.recompute_flops,
                          ShareOfForward(point.cost.recompute_flops, memory));
  }
  return text;
}

std::string DescribeNoPlanFits(const std::string& budget_setting, int64_t budget_bytes,
                               const MeasuredPass& pass, const PassMemory& memory) {
  const PlannedRecompute lowest = LowestPeakPlan(memory);
  const int64_t smallest = lowest.cost.peak_bytes;
  const int64_t keep_all = EvaluatePlan(memory, RecomputePlan{}).peak_bytes;
  return absl::StrFormat(
      "%s: no recompute plan fits in %s (%d bytes) at batch %s; the smallest predicted "
      "activation peak is %s (%d bytes, %.3f of the keep-everything peak, plan %s): give at least that",
      budget_setting, FormatBytes(budget_bytes), budget_bytes, FormatBatchShape(pass), FormatBytes(smallest),
      smallest, static_cast<double>(smallest) / static_cast<double>(keep_all), lowest.plan.ToString());
}

}  // namespace xlmr::recompute
