// Console progress: on a terminal, one line redrawn in place (step, bar, loss, tokens/s, ETA);
// otherwise (CI logs, files, pipes) a plain log line every `logging_steps` steps.
// Only rank 0 prints.
#ifndef XLMR_FRAMEWORK_TRAIN_PROGRESS_H_
#define XLMR_FRAMEWORK_TRAIN_PROGRESS_H_

#include <cstdint>
#include <cstdio>
#include <string>

namespace xlmr::train {

struct ProgressLine {
  int64_t step = 0;  // 1-based
  int64_t total_steps = 0;
  double epoch = 0;
  double loss = 0;
  double learning_rate = 0;
  double tokens_per_second = 0;
  double elapsed_seconds = 0;
  bool skipped = false;
};

class Progress {
 public:
  // `interactive`: redraw in place (a terminal); else print every `logging_steps`.
  Progress(std::FILE* out, bool interactive, int64_t logging_steps, bool enabled);
  // Detects a terminal on stderr.
  static Progress ForStderr(int64_t logging_steps, bool enabled);

  void Update(const ProgressLine& line);
  // A message on its own line (ends the in-place line first).
  void Message(const std::string& text);
  void Finish();

 private:
  static std::string FormatDuration(double seconds);
  std::FILE* out_;
  bool interactive_;
  int64_t logging_steps_;
  bool enabled_;
  bool line_open_ = false;
};

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_PROGRESS_H_
