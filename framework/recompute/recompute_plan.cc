#include "framework/recompute/recompute_plan.h"

#include "absl/strings/str_cat.h"

namespace xlmr::recompute {

char BlockRecomputeLetter(BlockRecompute mode) {
  switch (mode) {
    case BlockRecompute::kKeep:
      return 'K';
    case BlockRecompute::kSelective:
      return 'S';
    case BlockRecompute::kFull:
      return 'R';
  }
  return '?';
}

RecomputePlan RecomputePlan::Uniform(int num_blocks, BlockRecompute mode) {
  return RecomputePlan{std::vector<BlockRecompute>(static_cast<size_t>(num_blocks), mode)};
}

BlockRecompute RecomputePlan::ModeOf(int block) const {
  return blocks.empty() ? BlockRecompute::kKeep : blocks.at(static_cast<size_t>(block));
}

bool RecomputePlan::KeepsEverything() const {
  for (BlockRecompute mode : blocks) {
    if (mode != BlockRecompute::kKeep) return false;
  }
  return true;
}

std::string RecomputePlan::ToString() const {
  std::string text;
  for (BlockRecompute mode : blocks) text.push_back(BlockRecomputeLetter(mode));
  return text;
}

absl::StatusOr<RecomputePlan> ParseRecomputePlan(absl::string_view text) {
  RecomputePlan plan;
  for (size_t i = 0; i < text.size(); ++i) {
    switch (text[i]) {
      case 'K':
        plan.blocks.push_back(BlockRecompute::kKeep);
        break;
      case 'S':
        plan.blocks.push_back(BlockRecompute::kSelective);
        break;
      case 'R':
        plan.blocks.push_back(BlockRecompute::kFull);
        break;
      default:
        return absl::InvalidArgumentError(
            absl::StrCat("recompute plan '", text, "': expected K, S or R at position ", i,
                         ", got '", text.substr(i, 1), "'"));
    }
  }
  return plan;
}

}  // namespace xlmr::recompute
