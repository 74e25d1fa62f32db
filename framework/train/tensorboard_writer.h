// --report_to=tensorboard: the run's TensorBoard event file, written by rank 0.
//
// One file per logging directory, <logging_dir>/events.out.tfevents.xlmr_trainer (TensorBoard
// reads every file whose name contains "tfevents"). Each entry of the run's log history
// (framework/train/training_log.h) is one event at its step holding all of the entry's
// scalars, and the file is flushed after each one, so a crash loses no entry the run logged.
// The file is thus an image of TrainingState::log_history: on a resume it is cut back to the
// version event plus the entries the checkpoint's log history holds, and the entries it lacks
// (a file cut short by a kill, or deleted) are written again from that history; every step is
// then in the file once (a reader would otherwise show the steps between the checkpoint and the
// kill twice). A fresh run starts the file again.
#ifndef XLMR_FRAMEWORK_TRAIN_TENSORBOARD_WRITER_H_
#define XLMR_FRAMEWORK_TRAIN_TENSORBOARD_WRITER_H_

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {

// --logging_dir's default, inside the output directory.
inline constexpr char kDefaultLoggingDirName[] = "runs";

class TensorBoardWriter {
 public:
  static constexpr char kFileName[] = "events.out.tfevents.xlmr_trainer";

  // Opens <logging_dir>/kFileName (creating the directory). Fresh run (`log_history` empty and
  // !`resuming`): the file is started anew. Resume: the file keeps its version event and its
  // first log_history.size() entry events (those it has), is cut after them, and the entries of
  // `log_history` it lacks are appended. Errors name the file.
  static absl::StatusOr<TensorBoardWriter> Open(const std::string& logging_dir, bool resuming,
                                                const nlohmann::ordered_json& log_history);
  TensorBoardWriter(TensorBoardWriter&& other) noexcept
      : path_(std::move(other.path_)), file_(other.file_), dropped_events_(other.dropped_events_) {
    other.file_ = nullptr;
  }
  TensorBoardWriter& operator=(TensorBoardWriter&&) = delete;
  ~TensorBoardWriter();

  // Appends `entry` (a log_history object: "step" and named numbers) as one event at its step,
  // each number under HF's TensorBoard tag (TensorBoardTag), and flushes. Other members (text,
  // null) are not scalars and are left out, as HF's TensorBoardCallback leaves them out.
  absl::Status Write(const nlohmann::ordered_json& entry);

  const std::string& path() const { return path_; }
  // Events Open cut off on a resume: those the run wrote after the checkpoint being resumed.
  int64_t dropped_events() const { return dropped_events_; }

 private:
  TensorBoardWriter(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  absl::Status Append(const std::string& payload);
  std::string path_;
  std::FILE* file_;
  int64_t dropped_events_ = 0;
};

// HF's rewrite_logs: "eval_x" -> "eval/x", "test_x" -> "test/x", anything else "train/<name>".
std::string TensorBoardTag(const std::string& log_key);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_TENSORBOARD_WRITER_H_
