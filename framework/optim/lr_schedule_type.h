// The names of --lr_scheduler_type: every schedule of transformers' get_scheduler that needs no
// object besides the optimizer (not reduce_lr_on_plateau or greedy, which read metrics).
#ifndef XLMR_FRAMEWORK_OPTIM_LR_SCHEDULE_TYPE_H_
#define XLMR_FRAMEWORK_OPTIM_LR_SCHEDULE_TYPE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlmr::optim {

enum class LrScheduleType {
  kLinear,
  kCosine,
  kCosineWithRestarts,
  kPolynomial,
  kConstant,
  kConstantWithWarmup,
  kInverseSqrt,
  kCosineWithMinLr,
  kCosineWarmupWithMinLr,
  kWarmupStableDecay,
};

// The --lr_scheduler_type spelling of `type` (HF's SchedulerType value).
const char* LrScheduleTypeName(LrScheduleType type);

// Every spelling, comma separated, in the order above (for messages and --help).
std::string LrScheduleTypeNames();

// `text` as a type; an unknown name is one line naming --lr_scheduler_type and the choices.
absl::StatusOr<LrScheduleType> ParseLrScheduleType(absl::string_view text);

}  // namespace xlmr::optim

#endif  // XLMR_FRAMEWORK_OPTIM_LR_SCHEDULE_TYPE_H_
