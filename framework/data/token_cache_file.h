// Internal to //framework/data:token_cache: the cache file's bytes (layout in token_cache.h).
#ifndef XLMR_FRAMEWORK_DATA_TOKEN_CACHE_FILE_H_
#define XLMR_FRAMEWORK_DATA_TOKEN_CACHE_FILE_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/data/tokenized_dataset.h"

namespace xlmr::data::internal {

// Written into every cache header and mixed into every cache key (token_cache.cc), so a file
// of another format is a miss. Bumped whenever the file layout, the hash or the reading rules
// of record_reader change.
inline constexpr uint32_t kTokenCacheFormatVersion = 1;

// Writes `columns` to a temporary file next to `path`, syncs it and renames it to `path`.
// Creates missing parent directories. Errors name the path and the system's reason.
absl::Status WriteTokenCacheFile(const std::string& path, uint64_t key,
                                 const TokenizedColumns& columns);

// Maps `path` read-only and validates it against `key`. NotFound: no file; DataLoss: the
// file is not a complete, consistent cache for `key` (the message says what failed).
absl::StatusOr<TokenizedDataset> MapTokenCacheFile(const std::string& path, uint64_t key,
                                                   const std::string& data_path);

}  // namespace xlmr::data::internal

#endif  // XLMR_FRAMEWORK_DATA_TOKEN_CACHE_FILE_H_
