// What each encoder block keeps between its forward and its backward (activation
// checkpointing at block granularity, docs/ARCHITECTURE.md "Activation checkpointing").
//
//   kKeep       every activation its backward reads is saved (no recompute);
//   kSelective  the GEMM outputs are saved, the attention core (the [B,N,S,S] probabilities,
//               their softmax and dropout, and P*V) is recomputed from the saved q, k, v right
//               before the block's backward (Megatron's selective recompute);
//   kFull       only the block's input is saved; the whole block runs forward again right
//               before its backward (Hugging Face's checkpointing of one XLMRobertaLayer).
//
// Recompute regenerates identical dropout masks (counter-based RNG), so every plan computes
// bit-identical losses, gradients and weights; plans differ only in memory and time.
#ifndef XLMR_FRAMEWORK_RECOMPUTE_RECOMPUTE_PLAN_H_
#define XLMR_FRAMEWORK_RECOMPUTE_RECOMPUTE_PLAN_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlmr::recompute {

enum class BlockRecompute { kKeep, kSelective, kFull };

// The letter of a block in a written plan: 'K', 'S' or 'R' (recomputed whole).
char BlockRecomputeLetter(BlockRecompute mode);

struct RecomputePlan {
  // One entry per block, first block first. Empty means "keep everything", whatever the depth.
  std::vector<BlockRecompute> blocks;

  // `num_blocks` blocks, all `mode`.
  static RecomputePlan Uniform(int num_blocks, BlockRecompute mode);

  // The mode of `block` (kKeep for an empty plan).
  BlockRecompute ModeOf(int block) const;
  // True when no block recomputes anything.
  bool KeepsEverything() const;
  // "KKSSRR": one letter per block (BlockRecomputeLetter); "" for an empty plan.
  std::string ToString() const;

  bool operator==(const RecomputePlan& other) const { return blocks == other.blocks; }
  bool operator!=(const RecomputePlan& other) const { return !(*this == other); }
};

// Parses the written form ("KSR..", letters K, S, R only). InvalidArgument names the first
// bad character and its position.
absl::StatusOr<RecomputePlan> ParseRecomputePlan(absl::string_view text);

}  // namespace xlmr::recompute

#endif  // XLMR_FRAMEWORK_RECOMPUTE_RECOMPUTE_PLAN_H_
