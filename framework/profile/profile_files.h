// The files a profile leaves in its directory (docs/CONTRACT.md, "Profiles"):
//   trace.json        Chrome trace JSON (chrome_trace.h): open it in ui.perfetto.dev or chrome://tracing
//   op_classes.md     the per-class and per-op tables (profile_summary.h), for people
//   op_classes.json   the same figures, for scripts (bench/)
// Each is written durably under a temporary name and renamed; a second profile into the same
// directory replaces them.
#ifndef XLMR_FRAMEWORK_PROFILE_PROFILE_FILES_H_
#define XLMR_FRAMEWORK_PROFILE_PROFILE_FILES_H_

#include <string>

#include "absl/status/status.h"
#include "framework/profile/profiler.h"

namespace xlmr::profile {

// Creates `directory` when missing; errors name the file and the system's reason.
// `process_name` names the trace's host track.
absl::Status WriteProfile(const Recording& recording, const std::string& directory,
                          const std::string& process_name);

}  // namespace xlmr::profile

#endif  // XLMR_FRAMEWORK_PROFILE_PROFILE_FILES_H_
