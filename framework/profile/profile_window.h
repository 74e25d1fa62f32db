// Which steps --profile_steps records: "START:END", both 1-based and inclusive, as metrics.jsonl
// numbers its steps (xlmr_predict: its batches), e.g. "5:7" records steps 5, 6 and 7. The first
// steps of a run pay for warm-up (allocator growth, caches), which is why a window rarely
// starts at 1.
#ifndef XLMR_FRAMEWORK_PROFILE_PROFILE_WINDOW_H_
#define XLMR_FRAMEWORK_PROFILE_PROFILE_WINDOW_H_

#include <cstdint>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace xlmr::profile {

struct ProfileWindow {
  int64_t first = 0;  // 0: no profile
  int64_t last = 0;
  bool enabled() const { return first > 0; }
  bool Contains(int64_t step) const { return enabled() && step >= first && step <= last; }
};

// "" is no window. InvalidArgument "--<flag_name>: expected START:END with 1 <= START <= END,
// got <text>" for anything else that is not two such integers.
absl::StatusOr<ProfileWindow> ParseProfileWindow(absl::string_view text, absl::string_view flag_name);

}  // namespace xlmr::profile

#endif  // XLMR_FRAMEWORK_PROFILE_PROFILE_WINDOW_H_
