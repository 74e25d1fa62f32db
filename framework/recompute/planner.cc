#include "framework/recompute/planner.h"

#include <algorithm>
#include <limits>
#include <tuple>

#include "framework/core/check.h"

namespace xlmr::recompute {
namespace {

constexpr BlockRecompute kModes[] = {BlockRecompute::kKeep, BlockRecompute::kSelective,
                                     BlockRecompute::kFull};
constexpr int64_t kNoBudget = std::numeric_limits<int64_t>::max();

// A plan for blocks 0..i-1: what they hold afterwards, the peak of their phases (and of the
// fixed phases), and their recompute.
struct PartialPlan {
  int64_t held = 0;
  int64_t peak = 0;
  int64_t flops = 0;
  std::vector<BlockRecompute> modes;
};

// Keeps the states that no other state beats or equals on held, peak and flops together.
std::vector<PartialPlan> NonDominated(std::vector<PartialPlan> states) {
  std::sort(states.begin(), states.end(), [](const PartialPlan& a, const PartialPlan& b) {
    return std::tie(a.held, a.peak, a.flops) < std::tie(b.held, b.peak, b.flops);
  });
  std::vector<PartialPlan> kept;
  for (PartialPlan& state : states) {
    // Every kept state holds no more than `state` (sorted), so it dominates `state` when it
    // is no worse on peak and flops.
    const bool dominated = std::any_of(kept.begin(), kept.end(), [&](const PartialPlan& k) {
      return k.peak <= state.peak && k.flops <= state.flops;
    });
    if (!dominated) kept.push_back(std::move(state));
  }
  return kept;
}

// Every way to extend `states` by block `index`, without those whose peak exceeds the budget.
std::vector<PartialPlan> ExtendByBlock(const PassMemory& memory, int index,
                                       const std::vector<PartialPlan>& states, int64_t budget) {
  std::vector<PartialPlan> next;
  for (const PartialPlan& state : states) {
    for (BlockRecompute mode : kModes) {
      if (!ModeOffered(memory.blocks[index], mode)) continue;
      const int64_t peak = std::max(state.peak, BlockPhasesPeak(memory, index, mode, state.held));
      if (peak > budget) continue;
      PartialPlan extended{state.held + HeldBytes(memory.blocks[index], mode), peak,
                           state.flops + RecomputeFlops(memory.blocks[index], mode), state.modes};
      extended.modes.push_back(mode);
      next.push_back(std::move(extended));
    }
  }
  return NonDominated(std::move(next));
}

PlannedRecompute Finished(PartialPlan state) {
  return PlannedRecompute{RecomputePlan{std::move(state.modes)}, PlanCost{state.peak, state.flops}};
}

// The (peak, recompute) Pareto set of `plans`, in increasing recompute.
std::vector<PlannedRecompute> FrontOf(std::vector<PlannedRecompute> plans) {
  std::sort(plans.begin(), plans.end(), [](const PlannedRecompute& a, const PlannedRecompute& b) {
    return std::tie(a.cost.recompute_flops, a.cost.peak_bytes) <
           std::tie(b.cost.recompute_flops, b.cost.peak_bytes);
  });
  std::vector<PlannedRecompute> front;
  for (PlannedRecompute& plan : plans) {
    // Cheaper plans came first: this one is on the front only if it lowers the peak.
    if (front.empty() || plan.cost.peak_bytes < front.back().cost.peak_bytes) {
      front.push_back(std::move(plan));
    }
  }
  return front;
}

// The Pareto front of the complete plans whose peak is <= budget (empty when none fits).
std::vector<PlannedRecompute> FrontWithinBudget(const PassMemory& memory, int64_t budget) {
  std::vector<PartialPlan> states;
  const int64_t fixed = FixedPhasesPeak(memory);
  if (fixed <= budget) states.push_back(PartialPlan{0, fixed, 0, {}});
  for (int i = 0; i < memory.num_blocks() && !states.empty(); ++i) {
    states = ExtendByBlock(memory, i, states, budget);
  }
  std::vector<PlannedRecompute> complete;
  for (PartialPlan& state : states) {
    state.peak = std::max(state.peak, HeadPhasePeak(memory, state.held));
    if (state.peak <= budget) complete.push_back(Finished(std::move(state)));
  }
  return FrontOf(std::move(complete));
}

// Calls visit(plan) for each of the 3^L plans whose every mode is offered (ModeOffered).
template <typename Visit>
void ForEachPlan(const PassMemory& memory, const Visit& visit) {
  const int num_blocks = memory.num_blocks();
  XLMR_CHECK(num_blocks <= 12) << "enumerating 3^" << num_blocks << " plans";
  RecomputePlan plan = RecomputePlan::Uniform(num_blocks, BlockRecompute::kKeep);
  int64_t count = 1;
  for (int i = 0; i < num_blocks; ++i) count *= 3;
  for (int64_t code = 0; code < count; ++code) {
    int64_t digits = code;
    bool offered = true;
    for (int i = 0; i < num_blocks; ++i, digits /= 3) {
      plan.blocks[i] = kModes[digits % 3];
      offered = offered && ModeOffered(memory.blocks[i], plan.blocks[i]);
    }
    if (offered) visit(plan);
  }
}

}  // namespace

std::optional<PlannedRecompute> ChooseRecomputePlan(const PassMemory& memory, int64_t budget_bytes) {
  std::vector<PlannedRecompute> front = FrontWithinBudget(memory, budget_bytes);
  if (front.empty()) return std::nullopt;
  return std::move(front.front());  // the least recompute; the lowest peak of those
}

PlannedRecompute LowestPeakPlan(const PassMemory& memory) {
  std::vector<PlannedRecompute> front = FrontWithinBudget(memory, kNoBudget);
  XLMR_CHECK(!front.empty());
  return std::move(front.back());
}

std::vector<PlannedRecompute> ParetoFront(const PassMemory& memory) {
  return FrontWithinBudget(memory, kNoBudget);
}

std::optional<PlannedRecompute> ChooseRecomputePlanByEnumeration(const PassMemory& memory,
                                                                 int64_t budget_bytes) {
  std::optional<PlannedRecompute> best;
  ForEachPlan(memory, [&](const RecomputePlan& plan) {
    const PlanCost cost = EvaluatePlan(memory, plan);
    if (cost.peak_bytes > budget_bytes) return;
    if (!best.has_value() ||
        std::tie(cost.recompute_flops, cost.peak_bytes) <
            std::tie(best->cost.recompute_flops, best->cost.peak_bytes)) {
      best = PlannedRecompute{plan, cost};
    }
  });
  return best;
}

std::vector<PlannedRecompute> ParetoFrontByEnumeration(const PassMemory& memory) {
  std::vector<PlannedRecompute> all;
  ForEachPlan(memory, [&](const RecomputePlan& plan) {
    all.push_back(PlannedRecompute{plan, EvaluatePlan(memory, plan)});
  });
  return FrontOf(std::move(all));
}

}  // namespace xlmr::recompute
