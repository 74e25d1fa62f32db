// Tokenize a data file once; later runs memory-map the result (the idea of ffcv's .beton
// files): a second run with the same file, tokenizer, max_length and columns reads neither
// the text nor calls the tokenizer.
//
// The cache key is a Fingerprint (framework/core/fingerprint.h) of: the cache format version, the data
// file's bytes and format (extension), the column names, require_label, the tokenizer
// fingerprint and max_length. It needs no records, so a caller can ask for the cache before
// reading anything and read + tokenize only on a miss:
//
//   XLMR_ASSIGN_OR_RETURN(uint64_t key, ComputeTokenCacheKey(spec));
//   const std::string path = TokenCachePath(cache_dir, spec.data_path, key);
//   absl::StatusOr<TokenizedDataset> cached = OpenTokenCache(path, key, spec.data_path);
//   if (!cached.ok()) {  // a miss: no file, or one that failed validation
//     XLMR_ASSIGN_OR_RETURN(auto records, ReadRecords(spec.data_path, spec.columns, true));
//     cached = BuildTokenCache(path, key, spec.data_path, records, spec.max_length, tokenize);
//   }
// LoadOrBuildTokenCache does exactly that.
//
// File layout (native byte order, which is little-endian on every machine we build for; a
// cache is local to the machine that wrote it):
//   header (64 bytes): magic "XLMRTOKC", u32 format version, u32 header size (64), u64 key,
//     u64 N (examples), u64 T (tokens), u64 L (label names), u64 B (label name bytes),
//     u64 checksum (Fingerprint of every byte after the header)
//   i64 offsets[N + 1] | i64 lines[N] | i64 label_name_offsets[L + 1] | i32 token_ids[T] |
//   i32 label_index[N] | label name bytes[B]
// The file is written under a temporary name in the same directory and renamed, so readers
// (other ranks, a later run) see either no file or a complete one. On open it is validated:
// magic, version, key, the exact file length implied by the counts, the checksum and the
// array invariants; anything else is a miss and the file is rebuilt, never trusted.
#ifndef XLMR_FRAMEWORK_DATA_TOKEN_CACHE_H_
#define XLMR_FRAMEWORK_DATA_TOKEN_CACHE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/data/record_reader.h"
#include "framework/data/tokenized_dataset.h"

namespace xlmr::data {

// Token ids of one example, special tokens included and already truncated to max_length.
using TokenizeFn = std::function<std::vector<int32_t>(const std::string& text,
                                                      const std::optional<std::string>& pair)>;

// Everything that decides what a cache file holds.
struct TokenCacheSpec {
  std::string data_path;
  ColumnSpec columns;
  bool require_label = true;          // as for ReadRecords
  std::string tokenizer_fingerprint;  // e.g. FingerprintHex of the sentencepiece model file
  int max_length = 128;               // --max_seq_length
};

// The cache key of `spec`. Reads the whole data file. Errors: the file cannot be read, or
// its extension is not a data format.
absl::StatusOr<uint64_t> ComputeTokenCacheKey(const TokenCacheSpec& spec);

// "<cache_dir>/<data file's base name>.<key as 16 hex digits>.tokens".
std::string TokenCachePath(const std::string& cache_dir, const std::string& data_path,
                           uint64_t key);

// The dataset held by the cache file at `cache_path`, memory-mapped. `data_path` is the file
// name the dataset reports in messages. Not OK means a miss: NotFound when there is no file,
// DataLoss (with the reason) when it exists but fails validation or belongs to another key.
absl::StatusOr<TokenizedDataset> OpenTokenCache(const std::string& cache_path, uint64_t key,
                                                const std::string& data_path);

// Tokenizes every record in order. Label names are the distinct non-empty labels sorted by
// bytes; a record with label "" gets label index -1. Each result of `tokenize` must have
// 1..max_length ids (checked: a tokenizer that breaks this is a programming error).
TokenizedColumns TokenizeRecords(const std::vector<Record>& records, int max_length,
                                 const TokenizeFn& tokenize);

// Tokenizes `records`, writes the cache file atomically (creating missing directories) and
// returns the dataset mapped from the written file. Errors: the cache cannot be written.
absl::StatusOr<TokenizedDataset> BuildTokenCache(const std::string& cache_path, uint64_t key,
                                                 const std::string& data_path,
                                                 const std::vector<Record>& records, int max_length,
                                                 const TokenizeFn& tokenize);

// What LoadOrBuildTokenCache did, for the trainer's log.
struct TokenCacheOutcome {
  std::string path;         // the cache file
  bool hit = false;         // true: nothing was read or tokenized
  std::string miss_reason;  // why an existing file was not used; "" on a hit or no file
};

// Opens the cache for `spec` in `cache_dir`, or reads, tokenizes and writes it on a miss.
// Errors: those of ComputeTokenCacheKey, ReadRecords and BuildTokenCache.
absl::StatusOr<TokenizedDataset> LoadOrBuildTokenCache(const TokenCacheSpec& spec,
                                                       const std::string& cache_dir,
                                                       const TokenizeFn& tokenize,
                                                       TokenCacheOutcome* outcome = nullptr);

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_TOKEN_CACHE_H_
