#include "models/tokenizers/wordpiece/tokenizer_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "nlohmann/json.hpp"

namespace xlmr::models::bert {
namespace {

using nlohmann::json;

absl::Status ConfigError(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

// Sets `value` from object[key] when present and not null.
absl::Status ReadBool(const json& object, const std::string& key, const std::string& path,
                      bool* value) {
  if (!object.contains(key) || object.at(key).is_null()) return absl::OkStatus();
  if (!object.at(key).is_boolean()) {
    return ConfigError(path, absl::StrCat(key, " must be true, false or null, got ",
                                          object.at(key).dump()));
  }
  *value = object.at(key).get<bool>();
  return absl::OkStatus();
}

// A special token is saved either as its string or as an AddedToken object with "content".
absl::Status ReadTokenString(const json& object, const std::string& key, const std::string& path,
                             std::string* value) {
  if (!object.contains(key) || object.at(key).is_null()) return absl::OkStatus();
  const json& item = object.at(key);
  if (item.is_string()) {
    *value = item.get<std::string>();
    return absl::OkStatus();
  }
  if (item.is_object() && item.contains("content") && item.at("content").is_string()) {
    *value = item.at("content").get<std::string>();
    return absl::OkStatus();
  }
  return ConfigError(path, absl::StrCat(key, " must be a string or {\"content\": string}, got ",
                                        item.dump()));
}

}  // namespace

absl::StatusOr<TokenizerSettings> ReadTokenizerConfig(const std::string& directory) {
  const std::string path = (std::filesystem::path(directory) / "tokenizer_config.json").string();
  TokenizerSettings settings;
  std::ifstream file(path);
  if (!file) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) return settings;  // optional file
    return ConfigError(path, "cannot open");
  }
  std::stringstream content;
  content << file.rdbuf();
  const json object = json::parse(content.str(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) {
    return ConfigError(path, "is not a JSON object");
  }
  XLMR_RETURN_IF_ERROR(ReadBool(object, "do_lower_case", path, &settings.do_lower_case));
  settings.strip_accents = settings.do_lower_case;  // null: follow do_lower_case
  XLMR_RETURN_IF_ERROR(ReadBool(object, "strip_accents", path, &settings.strip_accents));
  XLMR_RETURN_IF_ERROR(
      ReadBool(object, "tokenize_chinese_chars", path, &settings.tokenize_chinese_chars));
  SpecialTokens& special = settings.special;
  XLMR_RETURN_IF_ERROR(ReadTokenString(object, "unk_token", path, &special.unk));
  XLMR_RETURN_IF_ERROR(ReadTokenString(object, "cls_token", path, &special.cls));
  XLMR_RETURN_IF_ERROR(ReadTokenString(object, "sep_token", path, &special.sep));
  XLMR_RETURN_IF_ERROR(ReadTokenString(object, "pad_token", path, &special.pad));
  XLMR_RETURN_IF_ERROR(ReadTokenString(object, "mask_token", path, &special.mask));
  return settings;
}

absl::StatusOr<absl::flat_hash_map<std::string, int32_t>> ReadVocab(const std::string& directory) {
  const std::string path = (std::filesystem::path(directory) / "vocab.txt").string();
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open the WordPiece vocabulary"));
  }
  std::stringstream content;
  content << file.rdbuf();
  if (file.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  const std::string text = content.str();
  // Python's readlines() in text mode, then rstrip("\n"): "\n", "\r\n" and a lone "\r" each
  // end a line (universal newlines); any other character, spaces included, belongs to the token.
  absl::flat_hash_map<std::string, int32_t> vocab;
  int32_t id = 0;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find_first_of("\r\n", begin);
    if (end == std::string::npos) end = text.size();
    vocab[text.substr(begin, end - begin)] = id++;
    // Skip the line ending, "\r\n" as one.
    if (end + 1 < text.size() && text[end] == '\r' && text[end + 1] == '\n') ++end;
    begin = end + 1;
  }
  if (vocab.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": empty vocabulary"));
  return vocab;
}

}  // namespace xlmr::models::bert
