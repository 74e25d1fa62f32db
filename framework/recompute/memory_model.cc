#include "framework/recompute/memory_model.h"

#include <algorithm>

#include "framework/core/check.h"

namespace xlmr::recompute {

bool ModeOffered(const BlockMemory& block, BlockRecompute mode) {
  return mode != BlockRecompute::kSelective || block.selective_offered;
}

int64_t HeldBytes(const BlockMemory& block, BlockRecompute mode) {
  switch (mode) {
    case BlockRecompute::kKeep:
      return block.keep_bytes;
    case BlockRecompute::kSelective:
      return block.selective_bytes;
    case BlockRecompute::kFull:
      return block.input_bytes;
  }
  return block.keep_bytes;
}

int64_t RecomputeFlops(const BlockMemory& block, BlockRecompute mode) {
  switch (mode) {
    case BlockRecompute::kKeep:
      return 0;
    case BlockRecompute::kSelective:
      return block.selective_recompute_flops;
    case BlockRecompute::kFull:
      return block.full_recompute_flops;
  }
  return 0;
}

int64_t ForwardBase(const PassMemory& memory) {
  return memory.external_bytes + memory.inputs_bytes + memory.embedding_resident_bytes;
}

int64_t BackwardBase(const PassMemory& memory) {
  return ForwardBase(memory) + memory.loss_resident_bytes;
}

namespace {

// Peak of recomputing `block` under `mode` and running its backward, above the earlier
// blocks' holdings and backward_base. The output's gradient is alive during the recompute.
int64_t BackwardPhase(const BlockMemory& block, BlockRecompute mode) {
  int64_t recompute = 0;
  if (mode == BlockRecompute::kSelective) recompute = block.selective_recompute_peak + block.input_bytes;
  if (mode == BlockRecompute::kFull) recompute = block.forward_peak + block.input_bytes;
  return std::max(recompute, block.backward_peak);
}

}  // namespace

int64_t BlockPhasesPeak(const PassMemory& memory, int index, BlockRecompute mode,
                        int64_t held_before) {
  const BlockMemory& block = memory.blocks.at(static_cast<size_t>(index));
  const int64_t forward = ForwardBase(memory) + held_before + block.forward_peak;
  const int64_t backward = BackwardBase(memory) + held_before + BackwardPhase(block, mode);
  return std::max(forward, backward);
}

int64_t HeadPhasePeak(const PassMemory& memory, int64_t held_by_blocks) {
  return ForwardBase(memory) + held_by_blocks + memory.head_peak;
}

int64_t FixedPhasesPeak(const PassMemory& memory) {
  const int64_t embeddings_forward =
      memory.external_bytes + memory.inputs_bytes + memory.embedding_forward_peak;
  return std::max(embeddings_forward, BackwardBase(memory) + memory.embedding_backward_peak);
}

PlanCost EvaluatePlan(const PassMemory& memory, const RecomputePlan& plan) {
  XLMR_CHECK(plan.blocks.empty() || plan.blocks.size() == memory.blocks.size())
      << "plan '" << plan.ToString() << "' for " << memory.blocks.size() << " blocks";
  PlanCost cost;
  cost.peak_bytes = FixedPhasesPeak(memory);
  int64_t held = 0;
  for (int i = 0; i < memory.num_blocks(); ++i) {
    const BlockRecompute mode = plan.ModeOf(i);
    cost.peak_bytes = std::max(cost.peak_bytes, BlockPhasesPeak(memory, i, mode, held));
    held += HeldBytes(memory.blocks[i], mode);
    cost.recompute_flops += RecomputeFlops(memory.blocks[i], mode);
  }
  cost.peak_bytes = std::max(cost.peak_bytes, HeadPhasePeak(memory, held));
  return cost;
}

}  // namespace xlmr::recompute
