#include "framework/train/tensorboard_writer.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/io/event_file.h"

namespace xlmr::train {
namespace {

double WallTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string();  // no file yet: nothing to keep
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return bytes;
}

// On a resume: cuts the file after the version event and the entries the history holds.
struct Kept {
  int64_t records = 0;  // kept, the version event included
  int64_t dropped = 0;  // intact records cut off
};
absl::StatusOr<Kept> KeepForResume(const std::string& path, size_t history_entries) {
  XLMR_ASSIGN_OR_RETURN(const std::string bytes, ReadWholeFile(path));
  const std::vector<uint64_t> ends = io::IntactRecordEnds(bytes);
  const size_t keep = std::min(ends.size(), history_entries + 1);
  std::error_code error;
  std::filesystem::resize_file(path, keep == 0 ? 0 : ends[keep - 1], error);
  if (error && keep > 0) return absl::DataLossError(absl::StrCat(path, ": cannot cut back: ", error.message()));
  return Kept{static_cast<int64_t>(keep), static_cast<int64_t>(ends.size() - keep)};
}

}  // namespace

std::string TensorBoardTag(const std::string& log_key) {
  for (const char* prefix : {"eval_", "test_"}) {
    if (absl::StartsWith(log_key, prefix)) {
      return absl::StrCat(std::string(prefix, std::strlen(prefix) - 1), "/", log_key.substr(std::strlen(prefix)));
    }
  }
  return "train/" + log_key;
}

absl::StatusOr<TensorBoardWriter> TensorBoardWriter::Open(const std::string& logging_dir, bool resuming,
                                                          const nlohmann::ordered_json& log_history) {
  std::error_code error;
  std::filesystem::create_directories(logging_dir, error);
  if (error) return absl::PermissionDeniedError(absl::StrCat("--logging_dir=", logging_dir, ": ", error.message()));
  const std::string path = logging_dir + "/" + kFileName;
  Kept kept;
  if (resuming) {
    XLMR_ASSIGN_OR_RETURN(kept, KeepForResume(path, log_history.size()));
  }
  std::FILE* file = std::fopen(path.c_str(), kept.records > 0 ? "ab" : "wb");
  if (file == nullptr) return absl::PermissionDeniedError(absl::StrCat(path, ": ", std::strerror(errno)));
  TensorBoardWriter writer(path, file);
  writer.dropped_events_ = kept.dropped;
  int64_t next = kept.records - 1;  // the first entry of log_history the file lacks
  if (kept.records == 0) {
    XLMR_RETURN_IF_ERROR(writer.Append(io::EncodeFileVersionEvent(WallTime())));
    next = 0;
  }
  for (size_t i = static_cast<size_t>(next); i < log_history.size(); ++i) {
    XLMR_RETURN_IF_ERROR(writer.Write(log_history[i]));
  }
  return writer;
}

TensorBoardWriter::~TensorBoardWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::Status TensorBoardWriter::Write(const nlohmann::ordered_json& entry) {
  std::vector<io::ScalarValue> scalars;
  for (const auto& [key, value] : entry.items()) {
    if (key == "step" || !value.is_number()) continue;
    scalars.push_back({TensorBoardTag(key), value.get<float>()});
  }
  return Append(io::EncodeScalarsEvent(WallTime(), entry.at("step").get<int64_t>(), scalars));
}

absl::Status TensorBoardWriter::Append(const std::string& payload) {
  const std::string record = io::FrameRecord(payload);
  const bool written = std::fwrite(record.data(), 1, record.size(), file_) == record.size();
  const bool flushed = std::fflush(file_) == 0;
  if (written && flushed) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat(path_, ": an event could not be written (", std::strerror(errno), ")"));
}

}  // namespace xlmr::train
