#include "framework/profile/profile_files.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/io/durable_file.h"
#include "framework/profile/chrome_trace.h"
#include "framework/profile/profile_summary.h"

namespace xlmr::profile {

absl::Status WriteProfile(const Recording& recording, const std::string& directory,
                          const std::string& process_name) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) return absl::InternalError(absl::StrCat(directory, ": cannot create the profile directory: ", error.message()));
  const ProfileSummary summary = Summarize(recording);
  XLMR_RETURN_IF_ERROR(io::WriteFileDurably(directory + "/trace.json", ChromeTrace(recording, process_name).dump()));
  XLMR_RETURN_IF_ERROR(io::WriteFileDurably(directory + "/op_classes.md", SummaryMarkdown(summary)));
  return io::WriteFileDurably(directory + "/op_classes.json", SummaryJson(summary).dump(2) + "\n");
}

}  // namespace xlmr::profile
