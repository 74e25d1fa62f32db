#include "models/xlmr/family_architecture.h"

namespace xlmr::models {

const FamilyArchitecture& ArchitectureOf(ModelFamily family) {
  static constexpr FamilyArchitecture kRobertaArchitecture{"roberta", false, false};
  static constexpr FamilyArchitecture kBertArchitecture{"bert", true, true};
  return family == ModelFamily::kBert ? kBertArchitecture : kRobertaArchitecture;
}

}  // namespace xlmr::models
