// Replacing one directory by another so that its path never names a half-replaced mixture:
// at every instant `target` is either the complete old directory or the complete new one.
// The trainer uses it for --overwrite_output_dir: the new run writes into a staging directory
// beside the output directory and takes the output directory's place at its first checkpoint
// (recipes/output_dir_policy.h decides when that happens).
#ifndef XLMR_FRAMEWORK_IO_REPLACE_DIRECTORY_H_
#define XLMR_FRAMEWORK_IO_REPLACE_DIRECTORY_H_

#include <string>

#include "absl/status/status.h"

namespace xlmr::io {

// Puts directory `staged` in the place of `target` and deletes the old `target`. Both must be
// on one filesystem (siblings are). On Linux the two names are exchanged in one step
// (renameat2 with RENAME_EXCHANGE), after which the old directory, now named `staged`, is
// removed: a crash in between leaves the new directory complete at `target` and the old one
// under `staged`. Where the filesystem cannot exchange (EINVAL, e.g. NFS), it falls back to
// ReplaceDirectoryByTwoRenames. A `target` that does not exist is simply created by renaming.
// Errors (DataLoss, naming the path and the system's reason) leave `target` as it was.
absl::Status ReplaceDirectory(const std::string& staged, const std::string& target);

// The fallback, public so that it is tested: renames `target` to `staged` + ".replaced", then
// `staged` to `target`, then deletes the old directory. A crash between the two renames leaves
// no `target` (the old one is under ".replaced", the new one under `staged`).
absl::Status ReplaceDirectoryByTwoRenames(const std::string& staged, const std::string& target);

}  // namespace xlmr::io

#endif  // XLMR_FRAMEWORK_IO_REPLACE_DIRECTORY_H_
