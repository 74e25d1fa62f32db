// Flushing files and directories to disk (fsync), so that what a rename publishes survives a
// power loss. The rule the checkpoint and the final model follow (docs/CONTRACT.md): every file
// of a directory and the directory itself are flushed before the rename that publishes the
// directory, and the parent directory after it; then a power loss leaves either the previous
// state or the new one whole. (A rename is atomic in the namespace at once, but on disk only
// once the directory holding the name is flushed, and the renamed files' data only once they
// are.)
#ifndef XLMR_FRAMEWORK_IO_DURABLE_FILE_H_
#define XLMR_FRAMEWORK_IO_DURABLE_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace xlmr::io {

// fsync of the file at `path`: its data and size are on disk when this returns OK. Errors name
// the path and the system's reason.
absl::Status SyncFile(const std::string& path);

// fsync of the directory at `path`: the names it holds (files created or renamed into it) are
// on disk when this returns OK.
absl::Status SyncDirectory(const std::string& path);

// SyncDirectory of the directory holding `path` (a file or a directory; "out/" is "out"): after
// a rename, the new name is on disk.
absl::Status SyncParentDirectory(const std::string& path);

// Writes `text` to `path` durably and atomically: into "<path>.tmp", flushed, renamed over
// `path`, and the directory holding it flushed. `path` is the old file or the whole new one.
absl::Status WriteFileDurably(const std::string& path, const std::string& text);

}  // namespace xlmr::io

#endif  // XLMR_FRAMEWORK_IO_DURABLE_FILE_H_
