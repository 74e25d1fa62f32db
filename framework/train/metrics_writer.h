// metrics.jsonl: one JSON object per line, flushed after each line so a crash loses nothing
// that was reported. Floats are printed with 17 significant digits, so they round-trip.
// Only rank 0 writes (other ranks get a writer that does nothing).
#ifndef XLMR_FRAMEWORK_TRAIN_METRICS_WRITER_H_
#define XLMR_FRAMEWORK_TRAIN_METRICS_WRITER_H_

#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {

class MetricsWriter {
 public:
  // Appends to `path` when `append` (resume), else truncates. `enabled` false: a no-op writer.
  static absl::StatusOr<MetricsWriter> Open(const std::string& path, bool append, bool enabled);
  MetricsWriter(MetricsWriter&& other) noexcept : file_(other.file_) { other.file_ = nullptr; }
  MetricsWriter& operator=(MetricsWriter&&) = delete;
  ~MetricsWriter();

  void Write(const nlohmann::ordered_json& record);

 private:
  explicit MetricsWriter(std::FILE* file) : file_(file) {}
  std::FILE* file_;
};

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_METRICS_WRITER_H_
