#include "framework/train/progress.h"

#include <unistd.h>

#include <cmath>

#include "absl/strings/str_format.h"

namespace xlmr::train {

Progress::Progress(std::FILE* out, bool interactive, int64_t logging_steps, bool enabled)
    : out_(out), interactive_(interactive), logging_steps_(logging_steps), enabled_(enabled) {}

Progress Progress::ForStderr(int64_t logging_steps, bool enabled) {
  return Progress(stderr, isatty(fileno(stderr)) != 0, logging_steps, enabled);
}

std::string Progress::FormatDuration(double seconds) {
  const int64_t s = static_cast<int64_t>(std::llround(std::max(seconds, 0.0)));
  return absl::StrFormat("%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60);
}

void Progress::Update(const ProgressLine& line) {
  if (!enabled_) return;
  const double fraction =
      line.total_steps > 0 ? static_cast<double>(line.step) / static_cast<double>(line.total_steps) : 0;
  const double eta = line.step > 0 ? line.elapsed_seconds / line.step * (line.total_steps - line.step) : 0;
  const std::string numbers = absl::StrFormat(
      "loss %.4f  lr %.3g  %.0f tok/s  elapsed %s  eta %s%s", line.loss, line.learning_rate,
      line.tokens_per_second, FormatDuration(line.elapsed_seconds), FormatDuration(eta),
      line.skipped ? "  (skipped: inf/nan gradients)" : "");
  if (interactive_) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(fraction * kWidth);
    const std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
    absl::FPrintF(out_, "\r\033[Kstep %d/%d [%s] epoch %.2f  %s", line.step, line.total_steps, bar,
                  line.epoch, numbers);
    line_open_ = true;
  } else if (line.step % logging_steps_ == 0 || line.step == line.total_steps || line.skipped) {
    absl::FPrintF(out_, "step %d/%d  epoch %.2f  %s\n", line.step, line.total_steps, line.epoch, numbers);
  }
  std::fflush(out_);
}

void Progress::Message(const std::string& text) {
  if (!enabled_) return;
  if (line_open_) std::fputc('\n', out_);
  line_open_ = false;
  absl::FPrintF(out_, "%s\n", text);
  std::fflush(out_);
}

void Progress::Finish() {
  if (enabled_ && line_open_) std::fputc('\n', out_);
  line_open_ = false;
}

}  // namespace xlmr::train
