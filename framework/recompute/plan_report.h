// What a user reads about recompute plans (xlmr_finetune's --activation_memory_budget and
// --print_memory_plan, docs/CONTRACT.md): the chosen plan in one line, the memory/recompute
// trade-off table, and why no plan fits a budget. Formatting only: the planner (planner.h)
// chooses, the memory model (memory_model.h) predicts.
//
// Plans are written one letter a block (recompute_plan.h: K keep, S selective, R recompute
// whole). Recompute is given in FLOPs (GFLOP in the one-line forms) and as a share of the
// encoder's forward, which is what recomputing every block whole costs.
#ifndef XLMR_FRAMEWORK_RECOMPUTE_PLAN_REPORT_H_
#define XLMR_FRAMEWORK_RECOMPUTE_PLAN_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "framework/recompute/memory_model.h"
#include "framework/recompute/planner.h"
#include "framework/recompute/recompute_plan.h"

namespace xlmr::recompute {

// The pass the memory was measured for, as the report names it.
struct MeasuredPass {
  BatchShape shape;
  std::string precision = "fp32";  // "fp32", or the autocast dtype ("fp16", "bf16")
};

// Padded: "[batch_size, sequence_length]"; packed: "[batch_size sequences, T tokens packed]".
std::string FormatBatchShape(const MeasuredPass& pass);

// One line: `planned`'s plan, its predicted peak against `budget_bytes`, its recompute.
std::string DescribePlan(const PlannedRecompute& planned, int64_t budget_bytes, const PassMemory& memory);

// The Pareto front (planner.h: ParetoFront) as a table, a header line naming the pass, the
// attention (eager when the blocks offer selective recompute, else fused, with a line saying
// why S is not offered) and one row per plan: peak bytes, recompute FLOPs, share of the
// forward. The row of `chosen` (if any) starts with '*'.
std::string FormatParetoFront(const std::vector<PlannedRecompute>& front, const PassMemory& memory,
                              const MeasuredPass& pass, const std::optional<RecomputePlan>& chosen);

// One line for a budget no plan fits: `budget_setting` (the flag as given, e.g.
// "--activation_memory_budget=1KiB"), the budget in bytes, and the smallest budget that
// would fit (LowestPeakPlan's peak, also as a share of the keep-everything peak).
std::string DescribeNoPlanFits(const std::string& budget_setting, int64_t budget_bytes,
                               const MeasuredPass& pass, const PassMemory& memory);

}  // namespace xlmr::recompute

#endif  // XLMR_FRAMEWORK_RECOMPUTE_PLAN_REPORT_H_
