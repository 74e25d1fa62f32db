#include "framework/profile/window_recorder.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/profile/profile_files.h"

namespace xlmr::profile {

WindowRecorder::WindowRecorder(ProfileWindow window, Device device, std::string directory, std::string process_name,
                               std::function<void(const std::string&)> message, bool enabled)
    : window_(window),
      device_(device),
      directory_(std::move(directory)),
      process_name_(std::move(process_name)),
      message_(std::move(message)),
      enabled_(enabled && window.enabled()) {}

std::optional<StepScope> WindowRecorder::BeginStep(int64_t number) {
  if (enabled_ && !recording_ && window_.Contains(number)) {
    std::string why;
    if (!StartRecording(device_, &why)) {
      message_(absl::StrCat("profile: the device's work is not traced (", why, "); host events only"));
    }
    recording_ = true;
  }
  if (!recording_) return std::nullopt;
  return std::optional<StepScope>(std::in_place, number);
}

void WindowRecorder::EndStep(int64_t number) {
  if (!recording_ || number < window_.last) return;
  recording_ = false;
  enabled_ = false;  // one window a run
  recorded_ = StopRecording();
}

absl::Status WindowRecorder::Finish() {
  if (recording_) EndStep(window_.last);
  if (!recorded_.has_value()) return absl::OkStatus();
  const Recording recording = *std::move(recorded_);
  recorded_.reset();
  XLMR_RETURN_IF_ERROR(WriteProfile(recording, directory_, process_name_));
  message_(absl::StrCat("profile written to ", directory_, " (trace.json: open in ui.perfetto.dev; op_classes.md)"));
  return absl::OkStatus();
}

}  // namespace xlmr::profile
