// A directory's manifest: `manifest.json`, written last into a checkpoint and into the final
// output, lists each file the writer put there with its size and CRC32C (file_checksum.h), so
// that a reader can tell a flipped bit, a truncated copy or a partial rsync from good bytes
// before it uses them (as LevelDB, TFRecord and ZFS checksum every record). Format
// (docs/CONTRACT.md):
//
//   {"format": "xlmr_trainer.manifest", "version": 1, "checksum": "crc32c",
//    "files": [{"name": "config.json", "size": 790, "crc32c": 3735928559}, ...]}
//
// names are plain file names in the directory (no '/'), each once; sizes and CRCs are JSON
// integers. The reader accepts nothing else (an unknown key, a hex string, a duplicate name),
// so that a flipped bit in the manifest itself is caught as well.
#ifndef XLMR_FRAMEWORK_IO_FILE_MANIFEST_H_
#define XLMR_FRAMEWORK_IO_FILE_MANIFEST_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace xlmr::io {

inline constexpr char kManifestFileName[] = "manifest.json";

// Seals a complete `directory`: each of `files` (names in it) is read once for its checksum and
// flushed to disk, then manifest.json is written durably (through manifest.json.tmp) and the
// directory flushed. Call it after the last file is written and before the rename that
// publishes the directory (durable_file.h). Errors name the file and the cause.
absl::Status WriteManifest(const std::string& directory, const std::vector<std::string>& files);

enum class ManifestCheck {
  kVerified,    // every file checked matched its size and CRC32C
  kNoManifest,  // the directory has no manifest.json (written before manifests existed)
};

// Checks `directory` against its manifest.json: every file `required` names must be listed,
// and every listed file (`scope` kAllListed) or only the required ones (kRequiredOnly) must
// exist with the recorded size and CRC32C. kNoManifest when there is no manifest.json.
// Otherwise DataLoss, one line naming the file and what failed ("<dir>/optimizer.safetensors:
// CRC32C 0x1c2d3e4f, manifest.json recorded 0x9a8b7c6d"), or naming manifest.json when it is
// unreadable, malformed or lacks a required file.
enum class ManifestScope { kAllListed, kRequiredOnly };
absl::StatusOr<ManifestCheck> VerifyManifest(const std::string& directory, const std::vector<std::string>& required,
                                             ManifestScope scope = ManifestScope::kAllListed);

}  // namespace xlmr::io

#endif  // XLMR_FRAMEWORK_IO_FILE_MANIFEST_H_
