#include "recipes/profile_flags.h"

#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, profile_steps, "",
          "START:END: record steps START to END (1-based, inclusive; xlmr_predict: batches) and write "
          "<output_dir>/profile/: trace.json (Perfetto, chrome://tracing), op_classes.md (time by op class)");

namespace xlmr::recipes {

absl::StatusOr<profile::ProfileWindow> ReadProfileStepsFlag() {
  return profile::ParseProfileWindow(absl::GetFlag(FLAGS_profile_steps), "profile_steps");
}

}  // namespace xlmr::recipes
