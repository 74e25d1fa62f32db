#include "models/tokenizers/wordpiece/bert_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "framework/core/check.h"
#include "framework/core/status_macros.h"
#include "models/tokenizers/wordpiece/tokenizer_files.h"

namespace xlmr::models {
namespace {

// token_type_ids: [CLS] A [SEP] are segment 0, B [SEP] of a pair segment 1.
constexpr int32_t kFirstSegment = 0;
constexpr int32_t kSecondSegment = 1;

absl::StatusOr<int32_t> SpecialId(const absl::flat_hash_map<std::string, int32_t>& vocab,
                                  const std::string& token, const char* role,
                                  const std::string& directory) {
  const auto it = vocab.find(token);
  if (it == vocab.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        (std::filesystem::path(directory) / "vocab.txt").string(), ": lacks the ", role,
        " token \"", token, "\" (BERT needs [UNK] [CLS] [SEP] [PAD] [MASK] or the",
        " tokenizer_config.json's own names for them)"));
  }
  return it->second;
}

int64_t VocabSize(const absl::flat_hash_map<std::string, int32_t>& vocab) {
  int32_t largest = -1;
  for (const auto& [token, id] : vocab) largest = std::max(largest, id);
  return int64_t{largest} + 1;
}

// Appends the first `count` of `ids` with token type `type`.
void AppendSegment(const std::vector<int32_t>& ids, int64_t count, int32_t type,
                   BertEncoding* encoding) {
  encoding->input_ids.insert(encoding->input_ids.end(), ids.begin(), ids.begin() + count);
  encoding->token_type_ids.insert(encoding->token_type_ids.end(), static_cast<size_t>(count),
                                  type);
}

void AppendToken(int32_t id, int32_t type, BertEncoding* encoding) {
  encoding->input_ids.push_back(id);
  encoding->token_type_ids.push_back(type);
}

}  // namespace

BertTokenizer::BertTokenizer(bert::WordPiece wordpiece, bert::NormalizerOptions options,
                             std::vector<std::pair<std::string, int32_t>> special_strings,
                             int64_t vocab_size)
    : wordpiece_(std::move(wordpiece)),
      options_(options),
      special_strings_(std::move(special_strings)),
      vocab_size_(vocab_size) {}

absl::StatusOr<BertTokenizer> BertTokenizer::Load(const std::string& directory) {
  using Vocab = absl::flat_hash_map<std::string, int32_t>;
  XLMR_ASSIGN_OR_RETURN(Vocab vocab, bert::ReadVocab(directory));
  XLMR_ASSIGN_OR_RETURN(const bert::TokenizerSettings settings,
                        bert::ReadTokenizerConfig(directory));
  const bert::SpecialTokens& names = settings.special;
  XLMR_ASSIGN_OR_RETURN(const int32_t unk, SpecialId(vocab, names.unk, "unknown", directory));
  XLMR_ASSIGN_OR_RETURN(const int32_t cls, SpecialId(vocab, names.cls, "classifier", directory));
  XLMR_ASSIGN_OR_RETURN(const int32_t sep, SpecialId(vocab, names.sep, "separator", directory));
  XLMR_ASSIGN_OR_RETURN(const int32_t pad, SpecialId(vocab, names.pad, "padding", directory));
  XLMR_ASSIGN_OR_RETURN(const int32_t mask, SpecialId(vocab, names.mask, "mask", directory));

  std::vector<std::pair<std::string, int32_t>> special_strings = {
      {names.unk, unk}, {names.cls, cls}, {names.sep, sep}, {names.pad, pad}, {names.mask, mask}};
  // Longest first, so that the split prefers the longest token starting at a position.
  std::stable_sort(special_strings.begin(), special_strings.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  special_strings.erase(std::remove_if(special_strings.begin(), special_strings.end(),
                                       [](const auto& s) { return s.first.empty(); }),
                        special_strings.end());

  bert::NormalizerOptions options;
  options.lowercase = settings.do_lower_case;
  options.strip_accents = settings.strip_accents;
  options.handle_chinese_chars = settings.tokenize_chinese_chars;
  const int64_t vocab_size = VocabSize(vocab);
  BertTokenizer tokenizer(bert::WordPiece(std::move(vocab), unk), options,
                          std::move(special_strings), vocab_size);
  tokenizer.unk_id_ = unk;
  tokenizer.cls_id_ = cls;
  tokenizer.sep_id_ = sep;
  tokenizer.pad_id_ = pad;
  tokenizer.mask_id_ = mask;
  return tokenizer;
}

void BertTokenizer::TokenizePlain(absl::string_view stretch, int64_t base,
                                  std::vector<int32_t>* ids, std::vector<TokenSpan>* spans) const {
  std::vector<bert::WordPieceToken> pieces;
  for (const bert::PreToken& word : bert::PreTokenize(stretch, base, options_)) {
    pieces.clear();
    wordpiece_.Tokenize(word.text, &pieces);
    for (const bert::WordPieceToken& piece : pieces) {
      ids->push_back(piece.id);
      if (spans == nullptr) continue;
      // The input span from the first byte's character to the last byte's character.
      spans->push_back({word.byte_sources[static_cast<size_t>(piece.begin)].begin,
                        word.byte_sources[static_cast<size_t>(piece.end - 1)].end});
    }
  }
}

void BertTokenizer::Tokenize(absl::string_view text, std::vector<int32_t>* ids,
                             std::vector<TokenSpan>* spans) const {
  // Leftmost, then longest, literal special token; the stretch before it is ordinary text.
  size_t stretch_begin = 0;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    for (const auto& [literal, id] : special_strings_) {
      if (text.compare(pos, literal.size(), literal) != 0) continue;
      TokenizePlain(text.substr(stretch_begin, pos - stretch_begin),
                    static_cast<int64_t>(stretch_begin), ids, spans);
      ids->push_back(id);
      if (spans != nullptr) {
        spans->push_back({static_cast<int64_t>(pos), static_cast<int64_t>(pos + literal.size())});
      }
      pos += literal.size();
      stretch_begin = pos;
      --pos;  // the loop's ++pos
      break;
    }
  }
  TokenizePlain(text.substr(stretch_begin), static_cast<int64_t>(stretch_begin), ids, spans);
}

std::vector<int32_t> BertTokenizer::EncodeText(absl::string_view text) const {
  std::vector<int32_t> ids;
  Tokenize(text, &ids, nullptr);
  return ids;
}

std::vector<int32_t> BertTokenizer::EncodeTextWithOffsets(absl::string_view text,
                                                          std::vector<TokenSpan>* spans) const {
  XLMR_CHECK(spans != nullptr);
  spans->clear();
  std::vector<int32_t> ids;
  Tokenize(text, &ids, spans);
  return ids;
}

BertEncoding BertTokenizer::EncodeWithTokenTypes(absl::string_view text, std::optional<absl::string_view> pair,
                                   int max_length) const {
  // transformers passes text_pair on only when it is truthy: "" encodes as no pair at all.
  if (pair.has_value() && pair->empty()) pair.reset();
  const int specials = pair.has_value() ? kSpecialTokensPair : kSpecialTokensSingle;
  XLMR_CHECK(max_length >= specials)
      << "max_length " << max_length << " cannot hold the " << specials << " special tokens";
  const int64_t budget = max_length - specials;
  const std::vector<int32_t> a = EncodeText(text);
  BertEncoding encoding;
  AppendToken(cls_id_, kFirstSegment, &encoding);
  if (!pair.has_value()) {
    AppendSegment(a, std::min<int64_t>(static_cast<int64_t>(a.size()), budget), kFirstSegment,
                  &encoding);
    AppendToken(sep_id_, kFirstSegment, &encoding);
  } else {
    const std::vector<int32_t> b = EncodeText(*pair);
    const auto [keep_a, keep_b] = PairKeepLengths(static_cast<int64_t>(a.size()),
                                                  static_cast<int64_t>(b.size()), budget,
                                                  PairTruncation::kFastTokenizer);
    AppendSegment(a, keep_a, kFirstSegment, &encoding);
    AppendToken(sep_id_, kFirstSegment, &encoding);
    AppendSegment(b, keep_b, kSecondSegment, &encoding);
    AppendToken(sep_id_, kSecondSegment, &encoding);
  }
  encoding.attention_mask.assign(encoding.input_ids.size(), 1);
  return encoding;
}

WordEncoding BertTokenizer::EncodeWords(const std::vector<std::string>& words,
                                        int max_length) const {
  return AssembleWords(words, max_length, cls_id_, sep_id_,
                       [this](absl::string_view word) { return EncodeText(word); });
}

Encoding BertTokenizer::Encode(absl::string_view text, std::optional<absl::string_view> pair,
                               int max_length) const {
  BertEncoding encoding = EncodeWithTokenTypes(text, pair, max_length);
  return Encoding{std::move(encoding.input_ids), std::move(encoding.attention_mask)};
}

}  // namespace xlmr::models
