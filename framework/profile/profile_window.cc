#include "framework/profile/profile_window.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace xlmr::profile {

absl::StatusOr<ProfileWindow> ParseProfileWindow(absl::string_view text, absl::string_view flag_name) {
  if (text.empty()) return ProfileWindow{};
  const std::vector<absl::string_view> parts = absl::StrSplit(text, ':');
  ProfileWindow window;
  if (parts.size() == 2 && absl::SimpleAtoi(parts[0], &window.first) &&
      absl::SimpleAtoi(parts[1], &window.last) && window.first >= 1 && window.first <= window.last) {
    return window;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag_name, ": expected START:END with 1 <= START <= END (e.g. 5:7), got ", text));
}

}  // namespace xlmr::profile
