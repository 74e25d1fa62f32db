// RoBERTa's tokenizer: GPT-2's byte-level BPE, producing the same input_ids and offsets as
// Hugging Face's RobertaTokenizerFast (transformers' RobertaTokenizer in transformers 5).
//
//   XLMR_ASSIGN_OR_RETURN(RobertaTokenizer tokenizer, RobertaTokenizer::Load(model_dir));
//   Encoding e = tokenizer.Encode("premise", std::string("hypothesis"), /*max_length=*/128);
//
// A directory holds vocab.json (byte-level token -> id), merges.txt (one "left right" merge a
// line, rank order, an optional "#version" first line) and optionally tokenizer_config.json
// (add_prefix_space, default false; trim_offsets, default true).
//
// Steps, each as tokenizers does it: ByteLevel pre-tokenization (models/tokenizers/byte_level_bpe/
// byte_level_pre_tokenizer.h: add_prefix_space, GPT-2's pattern, byte-to-unicode), BPE by merge
// rank on each piece (models/tokenizers/byte_level_bpe/bpe.h), then RobertaProcessing: offsets trimmed of the
// spaces a token holds (trim_offsets) and the special tokens added.
// Sequences are XLM-R's: single `<s> A </s>`, pair `<s> A </s></s> B </s>`, token types all 0.
//
// Known difference from HF: HF first splits the raw text on the literal strings of the special
// tokens ("<s>", "</s>", "<pad>", "<unk>", "<mask>") and maps those to their ids; this
// tokenizer spells such strings with ordinary byte-level tokens (as SentencePieceTokenizer does).
#ifndef XLMR_MODELS_TOKENIZERS_BYTE_LEVEL_BPE_ROBERTA_TOKENIZER_H_
#define XLMR_MODELS_TOKENIZERS_BYTE_LEVEL_BPE_ROBERTA_TOKENIZER_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "models/tokenizers/byte_level_bpe/bpe.h"
#include "models/tokenizers/text_tokenizer.h"
#include "models/tokenizers/post_processing.h"

namespace xlmr::models::roberta {

// tokenizer_config.json's settings that change tokenization.
struct RobertaTokenizerOptions {
  // Put a space in front of a text (and of every word of EncodeWords) that does not start with
  // one, so its first word is spelled like any other ("Ġword").
  bool add_prefix_space = false;
  // Report offsets without the spaces a token holds (RobertaProcessing's trim_offsets).
  bool trim_offsets = true;
};

class RobertaTokenizer final : public TextTokenizer {
 public:
  static constexpr int kSpecialTokensSingle = kRobertaStyleSpecialTokensSingle;
  static constexpr int kSpecialTokensPair = kRobertaStyleSpecialTokensPair;

  // Loads `directory`. Errors name the file: vocab.json or merges.txt missing or unreadable;
  // vocab.json not an object of non-negative integer ids, lacking one of <s> <pad> </s> <unk>
  // <mask> or one of the 256 byte-level characters; a line of merges.txt (named with its
  // number) that is not two tokens separated by one space, or whose tokens or their
  // concatenation are not in vocab.json; tokenizer_config.json unparsable or with a
  // non-boolean add_prefix_space or trim_offsets.
  static absl::StatusOr<RobertaTokenizer> Load(const std::string& directory);

  // Ids of text without special tokens (HF `tokenizer(text, add_special_tokens=False)`).
  // Any bytes are accepted (malformed UTF-8: see byte_level_pre_tokenizer.h).
  std::vector<int32_t> EncodeText(absl::string_view text) const;

  // EncodeText's ids and, per id, the bytes of `text` it stands for: HF's `offset_mapping`
  // (return_offsets_mapping=True, add_special_tokens=False), which counts characters where
  // this counts bytes. A token covers the whole characters its bytes came from, so the tokens
  // that split one multi-byte character all report that character; a token holding the prefix
  // space reports the text's first character. With trim_offsets, RobertaProcessing's rule:
  // leading spaces ("Ġ") are cut from the start (not the one prefix space of the first
  // token, or of a token starting at 0), trailing ones from the end, counted in characters.
  std::vector<int32_t> EncodeTextWithOffsets(absl::string_view text,
                                             std::vector<TokenSpan>* spans) const override;

  // Ids with special tokens for a text or a text pair, cut to at most `max_length` ids as HF's
  // fast tokenizer does with truncation=True (longest_first): single, the right end of A; pair,
  // PairKeepLengths(..., PairTruncation::kFastTokenizer). A present but empty `pair` is a pair
  // with no tokens, as in HF's batch call tok([a], [b]) (the single call tok(a, "") drops an
  // empty pair). Requires max_length >= 2 (single) or 4 (pair).
  Encoding Encode(absl::string_view text, std::optional<absl::string_view> pair,
                  int max_length) const override;

  // Ids and word ids of a sentence given as words, as HF gives them for
  // tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length):
  // <s> + tokens of word 0 + tokens of word 1 + ... + </s>, cut on the right to max_length ids
  // (</s> kept); word_ids -1 for <s> and </s>. Each word is pre-tokenized on its own, so with
  // add_prefix_space every word not starting with U+0020 gets its own "Ġ" (RoBERTa's intended
  // use: HF's RobertaTokenizerFast in transformers 4 refuses split words without
  // add_prefix_space; transformers 5 accepts them and spells each word without a space, and so
  // does this). A word with no token (empty) appears in no word_ids. Requires max_length >= 2.
  WordEncoding EncodeWords(const std::vector<std::string>& words, int max_length) const override;

  int32_t bos_id() const override { return bos_id_; }  // <s>, the classification token
  int32_t pad_id() const override { return pad_id_; }  // <pad>
  int32_t eos_id() const override { return eos_id_; }  // </s>, the separator
  int32_t unk_id() const { return unk_id_; }    // <unk>
  int32_t mask_id() const { return mask_id_; }  // <mask>
  // One more than the largest id of vocab.json: the embedding rows the ids need.
  int64_t id_limit() const { return id_limit_; }
  const RobertaTokenizerOptions& options() const { return options_; }
  int special_tokens_single() const override { return kSpecialTokensSingle; }
  int special_tokens_pair() const override { return kSpecialTokensPair; }

 private:
  // A token of one pre-tokenized text: id, untrimmed byte span, spaces at its two ends.
  struct RawToken {
    int32_t id = 0;
    TokenSpan span;
    int64_t leading_spaces = 0;
    int64_t trailing_spaces = 0;
  };

  RobertaTokenizer(BytePairEncoder encoder, RobertaTokenizerOptions options);
  std::vector<RawToken> Tokenize(absl::string_view text) const;
  std::vector<int32_t> Ids(absl::string_view text) const;

  BytePairEncoder encoder_;
  RobertaTokenizerOptions options_;
  std::array<int32_t, 256> byte_ids_{};  // id of each byte's byte-level character
  int32_t bos_id_ = 0;
  int32_t pad_id_ = 0;
  int32_t eos_id_ = 0;
  int32_t unk_id_ = 0;
  int32_t mask_id_ = 0;
  int64_t id_limit_ = 0;
};

}  // namespace xlmr::models::roberta

#endif  // XLMR_MODELS_TOKENIZERS_BYTE_LEVEL_BPE_ROBERTA_TOKENIZER_H_
