#include "framework/train/metrics_writer.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace xlmr::train {

absl::StatusOr<MetricsWriter> MetricsWriter::Open(const std::string& path, bool append, bool enabled) {
  if (!enabled) return MetricsWriter(path, nullptr, false);
  std::FILE* file = std::fopen(path.c_str(), append ? "a" : "w");
  if (file == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("--metrics_file=", path, ": cannot open for writing: ", std::strerror(errno)));
  }
  // Appends go to the end whatever the position; this only reads the length.
  const bool started_empty = std::fseek(file, 0, SEEK_END) == 0 && std::ftell(file) == 0;
  return MetricsWriter(path, file, started_empty);
}

MetricsWriter::~MetricsWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::Status MetricsWriter::Write(const nlohmann::ordered_json& record) {
  if (file_ == nullptr) return absl::OkStatus();
  const std::string line = record.dump() + "\n";
  // stdio buffers: a full disk may show only at the flush, so both results count. errno is
  // read at once, before anything else can change it.
  errno = 0;
  const bool written = std::fwrite(line.data(), 1, line.size(), file_) == line.size();
  const bool flushed = std::fflush(file_) == 0;
  if (written && flushed) return absl::OkStatus();
  const int error = errno;
  std::clearerr(file_);  // a later Write tries again rather than failing on the old error
  std::string what = "a record";
  if (record.is_object() && record.contains("type") && record["type"].is_string()) {
    what = absl::StrCat("the ", record["type"].get<std::string>(), " record");
    if (record.contains("step")) absl::StrAppend(&what, " of step ", record["step"].dump());
  }
  return absl::DataLossError(absl::StrCat("--metrics_file=", path_, ": writing ", what, " failed: ",
                                          error != 0 ? std::strerror(error) : "short write"));
}

namespace {

// Whether `line` (without its newline) is a record the checkpoint of `step` had seen.
bool BeforeCheckpoint(const std::string& line, int64_t step, bool eval_at_step_precedes_checkpoint) {
  // Without exceptions: a syntax error or a number like 1e9999 gives a discarded value.
  const nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (record.is_object() && record.contains("type") && record["type"] == "run") return true;  // the first line
  if (!record.is_object() || !record.contains("type") || !record.contains("step")) return false;
  if (!record["step"].is_number_integer() || !record["type"].is_string()) return false;
  const int64_t record_step = record["step"].get<int64_t>();
  const std::string type = record["type"].get<std::string>();
  if (type == "train") return record_step <= step;
  if (type == "eval") return record_step < step || (record_step == step && eval_at_step_precedes_checkpoint);
  return false;  // the summary, or a record this version does not write
}

}  // namespace

absl::StatusOr<int64_t> TruncateMetricsForResume(const std::string& path, int64_t step,
                                                 bool eval_at_step_precedes_checkpoint) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::PermissionDeniedError(absl::StrCat("--metrics_file=", path, ": cannot read"));
  uintmax_t keep_bytes = 0;  // the length of the prefix that stays
  int64_t kept = 0, total = 0;
  bool cutting = false;
  for (std::string line; std::getline(in, line);) {
    ++total;
    // A line without its newline at the end of the file was torn by a kill.
    if (cutting || in.eof() || !BeforeCheckpoint(line, step, eval_at_step_precedes_checkpoint)) {
      cutting = true;
      continue;
    }
    keep_bytes += line.size() + 1;
    ++kept;
  }
  in.close();
  std::filesystem::resize_file(path, keep_bytes, error);
  if (error) {
    return absl::PermissionDeniedError(absl::StrCat("--metrics_file=", path, ": cannot truncate for the resume: ",
                                                    error.message()));
  }
  return total - kept;
}

bool HoldsOnlyProgressRecords(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  constexpr absl::string_view kRecordStart = "{\"type\":\"";  // how Write's compact lines begin
  for (std::string line; std::getline(in, line);) {
    if (in.eof()) return absl::StartsWith(line, kRecordStart) || absl::StartsWith(kRecordStart, line);  // torn
    if (!BeforeCheckpoint(line, std::numeric_limits<int64_t>::max(), /*eval_at_step_precedes_checkpoint=*/true)) {
      return false;
    }
  }
  return true;
}

}  // namespace xlmr::train
