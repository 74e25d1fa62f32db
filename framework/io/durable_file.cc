#include "framework/io/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace xlmr::io {
namespace {

absl::Status SyncPath(const std::string& path, int flags) {
  const int fd = open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot open to flush it to disk"));
  absl::Status status = absl::OkStatus();
  if (fsync(fd) != 0) status = absl::ErrnoToStatus(errno, absl::StrCat(path, ": fsync failed"));
  close(fd);
  return status;
}

absl::Status WriteAll(int fd, const std::string& text, const std::string& path) {
  const char* bytes = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t written = write(fd, bytes, left);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return absl::ErrnoToStatus(errno, absl::StrCat(path, ": write failed"));
    bytes += written;
    left -= static_cast<size_t>(written);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SyncFile(const std::string& path) { return SyncPath(path, O_RDONLY); }

absl::Status SyncDirectory(const std::string& path) { return SyncPath(path, O_RDONLY | O_DIRECTORY); }

absl::Status SyncParentDirectory(const std::string& path) {
  std::filesystem::path normal = std::filesystem::absolute(path).lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();  // "out/" -> "out"
  return SyncDirectory(normal.parent_path().string());
}

absl::Status WriteFileDurably(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat(temporary, ": cannot create"));
  absl::Status status = WriteAll(fd, text, temporary);
  if (status.ok() && fsync(fd) != 0) status = absl::ErrnoToStatus(errno, absl::StrCat(temporary, ": fsync failed"));
  if (close(fd) != 0 && status.ok()) status = absl::ErrnoToStatus(errno, absl::StrCat(temporary, ": close failed"));
  if (status.ok() && std::rename(temporary.c_str(), path.c_str()) != 0) {
    status = absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot rename ", temporary, " to it"));
  }
  if (!status.ok()) {
    unlink(temporary.c_str());
    return status;
  }
  return SyncParentDirectory(path);
}

}  // namespace xlmr::io
