// A memory budget for activations: the largest activation peak (MemoryCategory::kActivations)
// a training step may reach, either in bytes or as a fraction of the peak without
// checkpointing. xlmr_finetune reads it from --activation_memory_budget (docs/CONTRACT.md),
// once, in recipes/finetune_flags.cc; the planner (recipes/memory_plan.h) gets the parsed value.
//
// Accepted forms (surrounding blanks ignored, units case-insensitive, a blank allowed between
// number and unit):
//   "1.5GiB", "800MB", "64KiB", "123B"  a number with a unit: B; KB, MB, GB, TB (powers of
//                                       1000); KiB, MiB, GiB, TiB (powers of 1024). Rounded
//                                       down to whole bytes; at least 1 byte.
//   "123456789"                         a whole number greater than 1 without a unit: bytes.
//   "0.4", "1"                          a number in (0, 1] without a unit: the fraction of the
//                                       predicted activation peak when every block keeps all
//                                       its activations.
// Anything else ("1.5", "-1GB", "0", "12 apples") is an error that names the flag the text
// came from.
#ifndef XLMR_FRAMEWORK_RECOMPUTE_BUDGET_FLAG_H_
#define XLMR_FRAMEWORK_RECOMPUTE_BUDGET_FLAG_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlmr::recompute {

struct MemoryBudget {
  enum class Kind { kBytes, kFraction };
  Kind kind = Kind::kBytes;
  int64_t bytes = 0;    // kBytes: >= 1
  double fraction = 0;  // kFraction: in (0, 1]
  std::string text;     // as the user wrote it, for messages

  // The budget in bytes: `bytes`, or floor(fraction * keep_all_peak_bytes).
  int64_t ToBytes(int64_t keep_all_peak_bytes) const;
  // As a user would write it back ("1610612736 bytes", "0.4 of the keep-all peak").
  std::string ToString() const;
};

// [in] text: the flag's value; flag_name: the flag it came from, named in the error
// ("--<flag_name>: expected ...").
absl::StatusOr<MemoryBudget> ParseMemoryBudget(absl::string_view text, absl::string_view flag_name);

// "512 B", "3.25 MiB", "1.50 GiB": binary units, two decimals above 1 KiB.
std::string FormatBytes(int64_t bytes);

}  // namespace xlmr::recompute

#endif  // XLMR_FRAMEWORK_RECOMPUTE_BUDGET_FLAG_H_
