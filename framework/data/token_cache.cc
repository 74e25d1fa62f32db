#include "framework/data/token_cache.h"

#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/core/fingerprint.h"
#include "framework/core/status_macros.h"
#include "framework/data/token_cache_file.h"

namespace xlmr::data {
namespace {

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

absl::StatusOr<uint64_t> ComputeTokenCacheKey(const TokenCacheSpec& spec) {
  XLMR_ASSIGN_OR_RETURN(const std::string format, DataFormatOf(spec.data_path));
  XLMR_ASSIGN_OR_RETURN(const uint64_t data_bytes, FingerprintFile(spec.data_path));
  Fingerprint key;
  key.AddInt(internal::kTokenCacheFormatVersion);
  key.AddInt(static_cast<int64_t>(data_bytes));
  key.AddString(format);
  key.AddString(spec.columns.text_column);
  key.AddInt(spec.columns.text_pair_column.has_value() ? 1 : 0);
  key.AddString(spec.columns.text_pair_column.value_or(""));
  key.AddString(spec.columns.label_column);
  key.AddInt(spec.require_label ? 1 : 0);
  key.AddString(spec.tokenizer_fingerprint);
  key.AddInt(spec.max_length);
  return key.Value();
}

std::string TokenCachePath(const std::string& cache_dir, const std::string& data_path,
                           uint64_t key) {
  return absl::StrCat(cache_dir, "/", BaseName(data_path), ".", FingerprintHex(key), ".tokens");
}

absl::StatusOr<TokenizedDataset> OpenTokenCache(const std::string& cache_path, uint64_t key,
                                                const std::string& data_path) {
  return internal::MapTokenCacheFile(cache_path, key, data_path);
}

TokenizedColumns TokenizeRecords(const std::vector<Record>& records, int max_length,
                                 const TokenizeFn& tokenize) {
  std::map<std::string, int32_t> index_of_label;  // ordered: the names come out sorted
  for (const Record& record : records) {
    if (!record.label.empty()) index_of_label.emplace(record.label, 0);
  }
  TokenizedColumns columns;
  for (auto& [name, index] : index_of_label) {
    index = static_cast<int32_t>(columns.label_names.size());
    columns.label_names.push_back(name);
  }
  columns.lines.reserve(records.size());
  columns.label_index.reserve(records.size());
  for (const Record& record : records) {
    const std::vector<int32_t> ids = tokenize(record.text, record.text_pair);
    XLMR_CHECK(!ids.empty() && static_cast<int64_t>(ids.size()) <= max_length)
        << "the tokenizer returned " << ids.size() << " ids for line " << record.line
        << ", expected 1.." << max_length;
    columns.token_ids.insert(columns.token_ids.end(), ids.begin(), ids.end());
    columns.offsets.push_back(static_cast<int64_t>(columns.token_ids.size()));
    columns.lines.push_back(record.line);
    columns.label_index.push_back(record.label.empty() ? -1 : index_of_label.at(record.label));
  }
  return columns;
}

absl::StatusOr<TokenizedDataset> BuildTokenCache(const std::string& cache_path, uint64_t key,
                                                 const std::string& data_path,
                                                 const std::vector<Record>& records, int max_length,
                                                 const TokenizeFn& tokenize) {
  const TokenizedColumns columns = TokenizeRecords(records, max_length, tokenize);
  absl::Status written = internal::WriteTokenCacheFile(cache_path, key, columns);
  if (!written.ok()) {
    return absl::Status(written.code(), absl::StrCat("cannot write the token cache for ", data_path,
                                                     ": ", written.message()));
  }
  // Serve from the file just written, so a first run reads exactly what later runs will.
  return OpenTokenCache(cache_path, key, data_path);
}

absl::StatusOr<TokenizedDataset> LoadOrBuildTokenCache(const TokenCacheSpec& spec,
                                                       const std::string& cache_dir,
                                                       const TokenizeFn& tokenize,
                                                       TokenCacheOutcome* outcome) {
  XLMR_ASSIGN_OR_RETURN(const uint64_t key, ComputeTokenCacheKey(spec));
  TokenCacheOutcome result;
  result.path = TokenCachePath(cache_dir, spec.data_path, key);
  absl::StatusOr<TokenizedDataset> cached = OpenTokenCache(result.path, key, spec.data_path);
  result.hit = cached.ok();
  if (!cached.ok() && !absl::IsNotFound(cached.status())) {
    result.miss_reason = std::string(cached.status().message());
  }
  if (!cached.ok()) {
    XLMR_ASSIGN_OR_RETURN(const std::vector<Record> records,
                          ReadRecords(spec.data_path, spec.columns, spec.require_label));
    cached = BuildTokenCache(result.path, key, spec.data_path, records, spec.max_length, tokenize);
  }
  if (outcome != nullptr) *outcome = std::move(result);
  return cached;
}

}  // namespace xlmr::data
