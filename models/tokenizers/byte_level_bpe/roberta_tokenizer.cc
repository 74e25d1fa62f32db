#include "models/tokenizers/byte_level_bpe/roberta_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "framework/core/check.h"
#include "framework/core/status_macros.h"
#include "framework/core/utf8.h"
#include "models/tokenizers/byte_level_bpe/byte_level_pre_tokenizer.h"
#include "nlohmann/json.hpp"

namespace xlmr::models::roberta {
namespace {

using Vocab = absl::flat_hash_map<std::string, int32_t>;

struct SpecialIds {
  int32_t bos = 0, pad = 0, eos = 0, unk = 0, mask = 0;
};

// The file's bytes; a missing or unreadable file is an error naming it.
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file.good()) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) return absl::DataLossError(absl::StrCat(path, ": cannot read"));
  return contents.str();
}

absl::StatusOr<nlohmann::json> ParseJson(const std::string& path, const std::string& text) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not valid JSON"));
  }
  return parsed;
}

absl::StatusOr<Vocab> ParseVocab(const std::string& path, const std::string& text) {
  XLMR_ASSIGN_OR_RETURN(nlohmann::json parsed, ParseJson(path, text));
  if (!parsed.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": expected an object token -> id"));
  }
  Vocab vocab;
  for (const auto& [token, id] : parsed.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": the id of \"", token, "\" is not a non-negative 32-bit integer"));
    }
    vocab[token] = id.get<int32_t>();
  }
  return vocab;
}

absl::StatusOr<int32_t> LookUp(const Vocab& vocab, const std::string& token,
                               const std::string& path) {
  auto it = vocab.find(token);
  if (it == vocab.end()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": lacks the token \"", token, "\""));
  }
  return it->second;
}

absl::StatusOr<SpecialIds> FindSpecialIds(const Vocab& vocab, const std::string& path) {
  SpecialIds ids;
  XLMR_ASSIGN_OR_RETURN(ids.bos, LookUp(vocab, "<s>", path));
  XLMR_ASSIGN_OR_RETURN(ids.pad, LookUp(vocab, "<pad>", path));
  XLMR_ASSIGN_OR_RETURN(ids.eos, LookUp(vocab, "</s>", path));
  XLMR_ASSIGN_OR_RETURN(ids.unk, LookUp(vocab, "<unk>", path));
  XLMR_ASSIGN_OR_RETURN(ids.mask, LookUp(vocab, "<mask>", path));
  return ids;
}

// merges.txt: an optional "#version..." first line, then "left right" per line in rank order
// (tokenizers' format; a final newline is optional, a "\r" before it is dropped).
absl::StatusOr<std::vector<Merge>> ParseMerges(const std::string& path, const std::string& text,
                                               const Vocab& vocab) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::vector<Merge> merges;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = lines[i];
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (i == 0 && absl::StartsWith(line, "#version")) continue;
    const std::string where = absl::StrCat(path, " line ", i + 1);
    const std::vector<std::string> parts = absl::StrSplit(line, ' ');
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected two tokens separated by one space, got \"", line, "\""));
    }
    Merge merge;
    XLMR_ASSIGN_OR_RETURN(merge.left, LookUp(vocab, parts[0], where + ": vocab.json"));
    XLMR_ASSIGN_OR_RETURN(merge.right, LookUp(vocab, parts[1], where + ": vocab.json"));
    XLMR_ASSIGN_OR_RETURN(merge.merged,
                          LookUp(vocab, parts[0] + parts[1], where + ": vocab.json"));
    merges.push_back(merge);
  }
  return merges;
}

absl::Status ReadBool(const nlohmann::json& config, const char* key, const std::string& path,
                      bool* value) {
  if (!config.contains(key) || config.at(key).is_null()) return absl::OkStatus();
  if (!config.at(key).is_boolean()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", key, " must be true or false"));
  }
  *value = config.at(key).get<bool>();
  return absl::OkStatus();
}

// tokenizer_config.json is optional: without it, RoBERTa's defaults.
absl::StatusOr<RobertaTokenizerOptions> ReadOptions(const std::string& path) {
  RobertaTokenizerOptions options;
  // Absent: the defaults. Present but unreadable: an error (ReadFile), never a silent default.
  if (!std::filesystem::exists(path)) return options;
  XLMR_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  XLMR_ASSIGN_OR_RETURN(nlohmann::json config, ParseJson(path, text));
  if (!config.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": expected a JSON object"));
  }
  XLMR_RETURN_IF_ERROR(ReadBool(config, "add_prefix_space", path, &options.add_prefix_space));
  XLMR_RETURN_IF_ERROR(ReadBool(config, "trim_offsets", path, &options.trim_offsets));
  return options;
}

int64_t CountBytes(absl::string_view bytes, char byte, bool from_end) {
  int64_t count = 0;
  if (from_end) {
    for (auto it = bytes.rbegin(); it != bytes.rend() && *it == byte; ++it) ++count;
  } else {
    for (auto it = bytes.begin(); it != bytes.end() && *it == byte; ++it) ++count;
  }
  return count;
}

// Index of the character that starts at byte `offset` (offset may be the text's end).
int64_t CharIndexAt(const std::vector<size_t>& char_starts, int64_t offset) {
  return std::lower_bound(char_starts.begin(), char_starts.end(), static_cast<size_t>(offset)) -
         char_starts.begin();
}

}  // namespace

absl::StatusOr<RobertaTokenizer> RobertaTokenizer::Load(const std::string& directory) {
  const std::string vocab_path = directory + "/vocab.json";
  const std::string merges_path = directory + "/merges.txt";
  XLMR_ASSIGN_OR_RETURN(std::string vocab_text, ReadFile(vocab_path));
  XLMR_ASSIGN_OR_RETURN(std::string merges_text, ReadFile(merges_path));
  XLMR_ASSIGN_OR_RETURN(Vocab vocab, ParseVocab(vocab_path, vocab_text));
  XLMR_ASSIGN_OR_RETURN(SpecialIds specials, FindSpecialIds(vocab, vocab_path));
  XLMR_ASSIGN_OR_RETURN(std::vector<Merge> merges, ParseMerges(merges_path, merges_text, vocab));
  XLMR_ASSIGN_OR_RETURN(RobertaTokenizerOptions options,
                        ReadOptions(directory + "/tokenizer_config.json"));

  RobertaTokenizer tokenizer(BytePairEncoder(merges), options);
  // Every byte must be spellable: tokenizers' byte-level training puts all 256 in the vocab.
  for (int b = 0; b < 256; ++b) {
    XLMR_ASSIGN_OR_RETURN(tokenizer.byte_ids_[b],
                          LookUp(vocab, ByteLevelAlphabet()[b], vocab_path));
  }
  tokenizer.bos_id_ = specials.bos;
  tokenizer.pad_id_ = specials.pad;
  tokenizer.eos_id_ = specials.eos;
  tokenizer.unk_id_ = specials.unk;
  tokenizer.mask_id_ = specials.mask;
  for (const auto& [token, id] : vocab) {
    tokenizer.id_limit_ = std::max<int64_t>(tokenizer.id_limit_, int64_t{id} + 1);
  }
  return tokenizer;
}

RobertaTokenizer::RobertaTokenizer(BytePairEncoder encoder, RobertaTokenizerOptions options)
    : encoder_(std::move(encoder)), options_(options) {}

std::vector<RobertaTokenizer::RawToken> RobertaTokenizer::Tokenize(absl::string_view text) const {
  std::vector<RawToken> tokens;
  for (const PreToken& piece : ByteLevelPreTokenize(text, options_.add_prefix_space)) {
    std::vector<int32_t> symbols;
    symbols.reserve(piece.bytes.size());
    for (unsigned char byte : piece.bytes) symbols.push_back(byte_ids_[byte]);
    for (const WordToken& t : encoder_.EncodeWord(symbols)) {
      const absl::string_view bytes =
          absl::string_view(piece.bytes).substr(t.begin, t.end - t.begin);
      RawToken token;
      token.id = t.id;
      token.span = {piece.sources[t.begin].begin, piece.sources[t.end - 1].end};
      token.leading_spaces = CountBytes(bytes, ' ', /*from_end=*/false);
      token.trailing_spaces = CountBytes(bytes, ' ', /*from_end=*/true);
      tokens.push_back(token);
    }
  }
  return tokens;
}

std::vector<int32_t> RobertaTokenizer::Ids(absl::string_view text) const {
  std::vector<int32_t> ids;
  for (const RawToken& token : Tokenize(text)) ids.push_back(token.id);
  return ids;
}

std::vector<int32_t> RobertaTokenizer::EncodeText(absl::string_view text) const {
  return Ids(text);
}

std::vector<int32_t> RobertaTokenizer::EncodeTextWithOffsets(absl::string_view text,
                                                             std::vector<TokenSpan>* spans) const {
  const std::vector<RawToken> tokens = Tokenize(text);
  // RobertaProcessing trims in characters; a space is one byte, but a prefix space stands for
  // a whole (maybe multi-byte) first character, so the arithmetic runs on character indices.
  const std::vector<size_t> char_starts = core::Utf8CharStarts(text);
  std::vector<int32_t> ids;
  spans->clear();
  for (size_t i = 0; i < tokens.size(); ++i) {
    const RawToken& token = tokens[i];
    ids.push_back(token.id);
    int64_t begin = CharIndexAt(char_starts, token.span.begin);
    int64_t end = CharIndexAt(char_starts, token.span.end);
    if (options_.trim_offsets) {
      int64_t leading = token.leading_spaces;
      const int64_t trailing = token.trailing_spaces;
      // The one space add_prefix_space put before the first word is not in the text's
      // offsets to begin with: nothing to cut at the start.
      const bool is_first = i == 0 || begin == 0;
      if (is_first && options_.add_prefix_space && leading == 1) leading = 0;
      if (leading > 0) begin = std::min(begin + leading, end);
      if (trailing > 0 && end >= trailing) end = std::max(end - trailing, begin);
    }
    spans->push_back({static_cast<int64_t>(char_starts[begin]),
                      static_cast<int64_t>(char_starts[end])});
  }
  return ids;
}

Encoding RobertaTokenizer::Encode(absl::string_view text, std::optional<absl::string_view> pair,
                                  int max_length) const {
  std::optional<std::vector<int32_t>> b;
  if (pair.has_value()) b = Ids(*pair);
  return AssembleRobertaStyle(Ids(text), b, max_length, bos_id_, eos_id_,
                              PairTruncation::kFastTokenizer);
}

WordEncoding RobertaTokenizer::EncodeWords(const std::vector<std::string>& words,
                                           int max_length) const {
  return AssembleWords(words, max_length, bos_id_, eos_id_,
                       [this](absl::string_view word) { return Ids(word); });
}

}  // namespace xlmr::models::roberta
