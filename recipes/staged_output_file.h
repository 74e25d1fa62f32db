// An output file of xlmr_predict written whole or not at all: the bytes go to `<path>.tmp`,
// renamed onto `path` by Commit(); a run that fails or is interrupted leaves no partial file
// under the name the user asked for. Errors name --output_file.
#ifndef XLMR_RECIPES_STAGED_OUTPUT_FILE_H_
#define XLMR_RECIPES_STAGED_OUTPUT_FILE_H_

#include <cstdio>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlmr::recipes {

class StagedOutputFile {
 public:
  // Creates `path`.tmp (error: it cannot be created, e.g. the directory does not exist).
  static absl::StatusOr<StagedOutputFile> Open(const std::string& path);

  StagedOutputFile(StagedOutputFile&& other) noexcept;
  StagedOutputFile& operator=(StagedOutputFile&&) = delete;
  // Removes `path`.tmp unless Commit() succeeded.
  ~StagedOutputFile();

  absl::Status Write(absl::string_view bytes);
  // Closes the temporary file and renames it onto `path`.
  absl::Status Commit();

  const std::string& path() const { return path_; }

 private:
  StagedOutputFile(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  std::string TemporaryPath() const { return path_ + ".tmp"; }

  std::string path_;
  std::FILE* file_;  // owned; nullptr once committed or moved from
};

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_STAGED_OUTPUT_FILE_H_
