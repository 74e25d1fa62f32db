// BERT tokenizer: the same input_ids, token_type_ids and offset_mapping as Hugging Face's
// BertTokenizerFast (transformers' BertTokenizer since version 5) loaded from a directory with
// vocab.txt and tokenizer_config.json (models/tokenizers/wordpiece/tokenizer_files.h has what is read).
//
//   XLMR_ASSIGN_OR_RETURN(BertTokenizer tokenizer, BertTokenizer::Load(model_dir));
//   BertEncoding e = tokenizer.EncodeWithTokenTypes("premise", std::string("hypothesis"), 128);
//
// A text goes through four stages:
//   1. the literal strings of the five special tokens ("[CLS]", ...) are cut out of the raw text
//      and become their ids, as tokenizers' added-token split does before normalization;
//   2. each stretch between them is normalized and split into words (basic_pre_tokenizer.h:
//      clean text, CJK split, accents, lower case, whitespace and punctuation);
//   3. each word becomes WordPiece pieces (wordpiece.h: "##" continuations, [UNK] for a word
//      with no spelling or over 100 characters);
//   4. Encode adds `[CLS] A [SEP]` (token types 0) or `[CLS] A [SEP] B [SEP]` (B and its [SEP]
//      type 1), cutting the texts to max_length as the fast tokenizer's longest_first does.
// No padding here: the batcher pads with pad_id() and attention 0.
#ifndef XLMR_MODELS_TOKENIZERS_WORDPIECE_BERT_TOKENIZER_H_
#define XLMR_MODELS_TOKENIZERS_WORDPIECE_BERT_TOKENIZER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "models/tokenizers/wordpiece/basic_pre_tokenizer.h"
#include "models/tokenizers/wordpiece/wordpiece.h"
#include "models/tokenizers/text_tokenizer.h"
#include "models/tokenizers/post_processing.h"

namespace xlmr::models {

// One tokenized example (or pair), before padding.
struct BertEncoding {
  std::vector<int32_t> input_ids;       // [seq_len], specials included
  std::vector<int32_t> attention_mask;  // [seq_len], all 1 (padding adds the zeros)
  std::vector<int32_t> token_type_ids;  // [seq_len], 0 for [CLS] A [SEP], 1 for B [SEP]
};

// Behind TextTokenizer (models/tokenizers/text_tokenizer.h) for the recipes: Encode drops the token types,
// which the batcher recomputes from segment_separator_id() ([SEP]).
class BertTokenizer final : public TextTokenizer {
 public:
  static constexpr int kSpecialTokensSingle = 2;  // [CLS] A [SEP]
  static constexpr int kSpecialTokensPair = 3;    // [CLS] A [SEP] B [SEP]

  // Loads `directory`/vocab.txt (required) and `directory`/tokenizer_config.json (optional).
  // Errors name the file: a missing vocab.txt, a vocab.txt lacking one of the five special
  // tokens (the token is named), a malformed tokenizer_config.json.
  static absl::StatusOr<BertTokenizer> Load(const std::string& directory);

  // Ids of `text` without special tokens around it (HF `tokenizer(text,
  // add_special_tokens=False)`); a special token's literal string inside the text is its id.
  // Any bytes are accepted (invalid UTF-8 is dropped, see basic_pre_tokenizer.h).
  std::vector<int32_t> EncodeText(absl::string_view text) const;

  // EncodeText's ids and, per id, the bytes of `text` it stands for: HF's offset_mapping
  // (return_offsets_mapping=True), which counts characters where this counts bytes. A piece's
  // span runs from the first input character its first normalized character came from to the
  // last one of its last character; an [UNK] spans its whole word. Requires spans != nullptr
  // (cleared first).
  std::vector<int32_t> EncodeTextWithOffsets(absl::string_view text,
                                             std::vector<TokenSpan>* spans) const override;

  // Ids with special tokens for a text or a text pair, cut to at most `max_length` ids with
  // `longest_first` as the fast tokenizer does (single: the right end of A; pair: PairKeepLengths
  // with budget max_length - 3 and PairTruncation::kFastTokenizer). An empty `pair` ("") is no
  // pair, as in transformers (it tests `if text_pair`); a pair that has bytes but no tokens
  // (" ") is a pair: [CLS] A [SEP] [SEP]. Requires max_length >= 2 (single) or 3 (pair).
  BertEncoding EncodeWithTokenTypes(absl::string_view text, std::optional<absl::string_view> pair,
                                    int max_length) const;
  // EncodeWithTokenTypes without the token types (TextTokenizer's).
  Encoding Encode(absl::string_view text, std::optional<absl::string_view> pair,
                  int max_length) const override;

  // Ids of a sentence given as words, as HF's fast tokenizer gives them for
  // tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length):
  // [CLS] + pieces of word 0 + pieces of word 1 + ... + [SEP], each word encoded on its own as
  // EncodeText(word) does, cut on the right to max_length ids ([SEP] kept). word_ids is -1 for
  // [CLS] and [SEP]; a word with no pieces (empty, whitespace, removed characters) and words cut
  // off appear in no word_ids. Token types are all 0. Requires max_length >= 2.
  WordEncoding EncodeWords(const std::vector<std::string>& words, int max_length) const override;

  int32_t unk_id() const { return unk_id_; }
  int32_t cls_id() const { return cls_id_; }
  int32_t sep_id() const { return sep_id_; }
  int32_t pad_id() const override { return pad_id_; }
  int32_t mask_id() const { return mask_id_; }
  // TextTokenizer's: [CLS] first, [SEP] last and between a pair's texts.
  int32_t bos_id() const override { return cls_id_; }
  int32_t eos_id() const override { return sep_id_; }
  int special_tokens_single() const override { return kSpecialTokensSingle; }
  int special_tokens_pair() const override { return kSpecialTokensPair; }
  int32_t segment_separator_id() const override { return sep_id_; }
  // Lines of vocab.txt: every id is below it.
  int64_t vocab_size() const { return vocab_size_; }

 private:
  BertTokenizer(bert::WordPiece wordpiece, bert::NormalizerOptions options,
                std::vector<std::pair<std::string, int32_t>> special_strings, int64_t vocab_size);

  // Appends the ids of `text` and, when `spans` is not null, their spans.
  void Tokenize(absl::string_view text, std::vector<int32_t>* ids,
                std::vector<TokenSpan>* spans) const;
  // Appends the ids (and spans) of a stretch of text without special tokens, at `base`.
  void TokenizePlain(absl::string_view stretch, int64_t base, std::vector<int32_t>* ids,
                     std::vector<TokenSpan>* spans) const;

  bert::WordPiece wordpiece_;
  bert::NormalizerOptions options_;
  // The literal strings of the special tokens and their ids, longest first.
  std::vector<std::pair<std::string, int32_t>> special_strings_;
  int64_t vocab_size_ = 0;
  int32_t unk_id_ = 0;
  int32_t cls_id_ = 0;
  int32_t sep_id_ = 0;
  int32_t pad_id_ = 0;
  int32_t mask_id_ = 0;
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_TOKENIZERS_WORDPIECE_BERT_TOKENIZER_H_
