// --profile_steps' life cycle, the same in training and in prediction: the recording starts at
// the first step of the window that runs (a resumed run may begin inside it), each step is a
// StepScope, the recording stops after the window's last step, and Finish writes the files of
// profile_files.h into the directory (stopping a window the run cut short). Stepping does no
// I/O, so a loop that cannot return an error (an evaluation's batches) can step it.
//
//   WindowRecorder profiler(window, device, out + "/profile", "xlmr_predict", print);
//   for (int64_t n = 1; ...; ++n) {
//     { std::optional<StepScope> step = profiler.BeginStep(n); ...the step's work... }
//     profiler.EndStep(n);
//   }
//   XLMR_RETURN_IF_ERROR(profiler.Finish());
#ifndef XLMR_FRAMEWORK_PROFILE_WINDOW_RECORDER_H_
#define XLMR_FRAMEWORK_PROFILE_WINDOW_RECORDER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "framework/core/device.h"
#include "framework/profile/profile_window.h"
#include "framework/profile/profiler.h"

namespace xlmr::profile {

class WindowRecorder {
 public:
  // `message` receives one line for the user: the device not traced, the files written.
  // A recorder with a disabled window (or `enabled` false: ranks other than 0) does nothing.
  WindowRecorder(ProfileWindow window, Device device, std::string directory, std::string process_name,
                 std::function<void(const std::string&)> message, bool enabled = true);

  // The step scope of step `number` (empty outside a recording); starts the recording when
  // `number` is in the window and none is on.
  std::optional<StepScope> BeginStep(int64_t number);
  // After step `number`'s scope has closed: stops the recording when it was the window's last.
  void EndStep(int64_t number);
  // Whether a stopped recording waits for Finish.
  bool has_finished_window() const { return recorded_.has_value(); }
  // Stops a recording still on (the run ended inside the window) and writes what was recorded,
  // once; nothing when there is nothing.
  absl::Status Finish();

  // The directory the recording is written to; settable until the recording ends (a staged
  // output directory that has been published since the recorder was made).
  void set_directory(std::string directory) { directory_ = std::move(directory); }

 private:
  ProfileWindow window_;
  Device device_;
  std::string directory_;
  std::string process_name_;
  std::function<void(const std::string&)> message_;
  bool enabled_;
  bool recording_ = false;
  std::optional<Recording> recorded_;
};

}  // namespace xlmr::profile

#endif  // XLMR_FRAMEWORK_PROFILE_WINDOW_RECORDER_H_
