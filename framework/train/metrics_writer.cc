#include "framework/train/metrics_writer.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace xlmr::train {

absl::StatusOr<MetricsWriter> MetricsWriter::Open(const std::string& path, bool append, bool enabled) {
  if (!enabled) return MetricsWriter(nullptr);
  std::FILE* file = std::fopen(path.c_str(), append ? "a" : "w");
  if (file == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("--metrics_file=", path, ": cannot open for writing: ", std::strerror(errno)));
  }
  return MetricsWriter(file);
}

MetricsWriter::~MetricsWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void MetricsWriter::Write(const nlohmann::ordered_json& record) {
  if (file_ == nullptr) return;
  const std::string line = record.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

}  // namespace xlmr::train
