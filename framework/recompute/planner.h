// Chooses a recompute plan under an activation-memory budget, exactly.
//
// Objective: the least recompute (RecomputeFlops summed over blocks) among the plans whose
// predicted peak (memory_model.h) is at most the budget; among equally cheap plans, the lowest
// peak. Greedy choices are not optimal here: where a block sits matters (a block kept near the
// input is held through the whole backward, one kept near the output only briefly), so the
// planner is a dynamic program over blocks 0..L-1 whose state is (bytes held by the blocks so
// far, peak so far, recompute so far). A state that another beats or equals on all three can
// never complete into a better plan, so only the non-dominated states are kept; the result is
// exact, with at most a few hundred states per block for identical blocks.
//
// Modes a block does not offer (memory_model.h: ModeOffered; kSelective under fused attention)
// are never chosen. The enumerators at the end try all 3^L plans of offered modes; they are
// the oracle of the planner's test.
#ifndef XLMR_FRAMEWORK_RECOMPUTE_PLANNER_H_
#define XLMR_FRAMEWORK_RECOMPUTE_PLANNER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "framework/recompute/memory_model.h"
#include "framework/recompute/recompute_plan.h"

namespace xlmr::recompute {

struct PlannedRecompute {
  RecomputePlan plan;  // one entry per block
  PlanCost cost;       // its predicted peak and recompute
};

// The least-recompute plan whose predicted peak is <= budget_bytes; nullopt when none fits
// (then LowestPeakPlan(memory).cost.peak_bytes is the smallest budget that would).
std::optional<PlannedRecompute> ChooseRecomputePlan(const PassMemory& memory, int64_t budget_bytes);

// The plan with the lowest predicted peak (the cheapest of those): the smallest feasible budget.
PlannedRecompute LowestPeakPlan(const PassMemory& memory);

// The memory/time trade-off curve: one plan per Pareto-optimal (peak, recompute) point, in
// increasing recompute (so decreasing peak), from keep-everything to LowestPeakPlan.
std::vector<PlannedRecompute> ParetoFront(const PassMemory& memory);

// Test oracles: the same answers by evaluating all 3^L plans (L <= 12).
std::optional<PlannedRecompute> ChooseRecomputePlanByEnumeration(const PassMemory& memory,
                                                                 int64_t budget_bytes);
std::vector<PlannedRecompute> ParetoFrontByEnumeration(const PassMemory& memory);

}  // namespace xlmr::recompute

#endif  // XLMR_FRAMEWORK_RECOMPUTE_PLANNER_H_
