// --profile_steps, the profiler's flag in both binaries (docs/CONTRACT.md, "Profiles"):
// xlmr_finetune records optimizer steps START..END, xlmr_predict its prediction batches
// START..END, and each writes <output_dir>/profile/ (trace.json, op_classes.md, op_classes.json).
#ifndef XLMR_RECIPES_PROFILE_FLAGS_H_
#define XLMR_RECIPES_PROFILE_FLAGS_H_

#include "absl/status/statusor.h"
#include "framework/profile/profile_window.h"

namespace xlmr::recipes {

// The window; InvalidArgument naming the flag for anything but "" or START:END with
// 1 <= START <= END.
absl::StatusOr<profile::ProfileWindow> ReadProfileStepsFlag();

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_PROFILE_FLAGS_H_
