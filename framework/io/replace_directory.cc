#include "framework/io/replace_directory.h"

#include <fcntl.h>  // AT_FDCWD
#include <stdio.h>  // renameat2, RENAME_EXCHANGE (glibc >= 2.28)

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace xlmr::io {
namespace fs = std::filesystem;
namespace {

absl::Status RenameError(const std::string& from, const std::string& to, int error) {
  return absl::DataLossError(absl::StrCat("cannot rename ", from, " to ", to, ": ", std::strerror(error)));
}

// Deletes the old directory once the new one is in place; a failure here costs disk space
// only, so it is reported but does not undo the replacement.
absl::Status RemoveOld(const std::string& old) {
  std::error_code error;
  fs::remove_all(old, error);
  if (error) return absl::DataLossError(absl::StrCat("cannot remove the replaced directory ", old, ": ", error.message()));
  return absl::OkStatus();
}

}  // namespace

absl::Status ReplaceDirectory(const std::string& staged, const std::string& target) {
  if (renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) == 0) {
    return RemoveOld(staged);  // the old directory is now named `staged`
  }
  const int error = errno;
  if (error == ENOENT && fs::exists(staged)) {  // no `target`: nothing to replace
    if (std::rename(staged.c_str(), target.c_str()) != 0) return RenameError(staged, target, errno);
    return absl::OkStatus();
  }
  if (error == EINVAL || error == ENOSYS) return ReplaceDirectoryByTwoRenames(staged, target);
  return RenameError(staged, target, error);
}

absl::Status ReplaceDirectoryByTwoRenames(const std::string& staged, const std::string& target) {
  const std::string old = staged + ".replaced";
  std::error_code ignored;
  fs::remove_all(old, ignored);  // left by a crash between the renames of an earlier run
  if (!fs::exists(target)) {
    if (std::rename(staged.c_str(), target.c_str()) != 0) return RenameError(staged, target, errno);
    return absl::OkStatus();
  }
  if (std::rename(target.c_str(), old.c_str()) != 0) return RenameError(target, old, errno);
  if (std::rename(staged.c_str(), target.c_str()) != 0) {
    const int error = errno;
    std::rename(old.c_str(), target.c_str());  // put the old one back
    return RenameError(staged, target, error);
  }
  return RemoveOld(old);
}

}  // namespace xlmr::io
