#include "recipes/staged_output_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"

namespace xlmr::recipes {
namespace {

absl::Status OutputError(const std::string& path, const std::string& what) {
  return absl::PermissionDeniedError(absl::StrCat("--output_file=", path, ": ", what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<StagedOutputFile> StagedOutputFile::Open(const std::string& path) {
  std::FILE* file = std::fopen((path + ".tmp").c_str(), "wb");
  if (file == nullptr) return OutputError(path, absl::StrCat("cannot create ", path, ".tmp"));
  return StagedOutputFile(path, file);
}

StagedOutputFile::StagedOutputFile(StagedOutputFile&& other) noexcept
    : path_(std::move(other.path_)), file_(other.file_) {
  other.file_ = nullptr;
}

StagedOutputFile::~StagedOutputFile() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  std::error_code ignored;  // best effort: the run is failing already
  std::filesystem::remove(TemporaryPath(), ignored);
}

absl::Status StagedOutputFile::Write(absl::string_view bytes) {
  XLMR_CHECK(file_ != nullptr);
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    return OutputError(path_, absl::StrCat("cannot write ", TemporaryPath()));
  }
  return absl::OkStatus();
}

absl::Status StagedOutputFile::Commit() {
  XLMR_CHECK(file_ != nullptr);
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!closed || std::rename(TemporaryPath().c_str(), path_.c_str()) != 0) {
    const absl::Status error = OutputError(path_, absl::StrCat("cannot finish ", TemporaryPath()));
    std::error_code ignored;
    std::filesystem::remove(TemporaryPath(), ignored);
    return error;
  }
  return absl::OkStatus();
}

}  // namespace xlmr::recipes
