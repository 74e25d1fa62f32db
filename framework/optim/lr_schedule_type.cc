#include "framework/optim/lr_schedule_type.h"

#include "absl/strings/str_cat.h"

namespace xlmr::optim {
namespace {

struct NamedType {
  const char* name;
  LrScheduleType type;
};
constexpr NamedType kTypes[] = {
    {"linear", LrScheduleType::kLinear},
    {"cosine", LrScheduleType::kCosine},
    {"cosine_with_restarts", LrScheduleType::kCosineWithRestarts},
    {"polynomial", LrScheduleType::kPolynomial},
    {"constant", LrScheduleType::kConstant},
    {"constant_with_warmup", LrScheduleType::kConstantWithWarmup},
    {"inverse_sqrt", LrScheduleType::kInverseSqrt},
    {"cosine_with_min_lr", LrScheduleType::kCosineWithMinLr},
    {"cosine_warmup_with_min_lr", LrScheduleType::kCosineWarmupWithMinLr},
    {"warmup_stable_decay", LrScheduleType::kWarmupStableDecay},
};

}  // namespace

const char* LrScheduleTypeName(LrScheduleType type) {
  for (const NamedType& named : kTypes) {
    if (named.type == type) return named.name;
  }
  return "?";
}

std::string LrScheduleTypeNames() {
  std::string names;
  for (const NamedType& named : kTypes) absl::StrAppend(&names, names.empty() ? "" : ", ", named.name);
  return names;
}

absl::StatusOr<LrScheduleType> ParseLrScheduleType(absl::string_view text) {
  for (const NamedType& named : kTypes) {
    if (text == named.name) return named.type;
  }
  return absl::InvalidArgumentError(absl::StrCat("--lr_scheduler_type must be one of ",
                                                 LrScheduleTypeNames(), "; got \"", text, "\""));
}

}  // namespace xlmr::optim
