// XLM-RoBERTa tokenizer: a SentencePiece unigram model plus fairseq's id mapping, producing the
// same input_ids as Hugging Face's XLMRobertaTokenizer.
//
//   XLMR_ASSIGN_OR_RETURN(XlmrTokenizer tokenizer,
//                         XlmrTokenizer::Load(dir + "/sentencepiece.bpe.model", config.vocab_size));
//   Encoding e = tokenizer.Encode("premise", std::string("hypothesis"), /*max_length=*/128);
//
// Id mapping (fairseq dictionary on top of the SentencePiece vocabulary):
//   model id 0 <s>, 1 <pad>, 2 </s>, 3 <unk>; SentencePiece id i >= 3 -> i + 1;
//   SentencePiece <unk> (0) -> 3; <mask> = spm_size() + 1; the embedding table has
//   spm_size() + 2 rows (250002 for xlm-roberta).
// Sequences: single `<s> A </s>` = [0] + A + [2]; pair `<s> A </s></s> B </s>` =
//   [0] + A + [2, 2] + B + [2]. token_type_ids are all zero (type_vocab_size 1), so none are
//   returned. No padding here: the batcher pads on the right with kPad and attention 0.
//
// Known difference from HF: HF's tokenizers first split the raw text on the literal strings of
// special tokens ("<s>", "</s>", "<pad>", "<unk>", "<mask>") and map those to their ids; this
// tokenizer hands all text to SentencePiece, which spells such strings as ordinary pieces.
#ifndef XLMR_MODELS_XLMR_TOKENIZER_H_
#define XLMR_MODELS_XLMR_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "models/text_tokenizer.h"

namespace xlmr::models {

namespace internal {
class SentencePieceModel;
}  // namespace internal

// How `longest_first` shares `budget` = max_length - 4 tokens between the two texts of a pair.
// Both HF implementations keep a text whole when it has at most half the budget and give the
// rest to the other text; they differ only when both texts must be cut and the budget is odd:
// the slow rule gives the odd token to the first text, the fast rule to the longer text (to the
// second one on a tie). E.g. 3 + 3 tokens, max_length 7: slow keeps 2 + 1, fast keeps 1 + 2.
enum class PairTruncation {
  // HF `PreTrainedTokenizer.truncate_sequences` (slow, Python; transformers <= 4.x
  // XLMRobertaTokenizer). The rule written in docs/xlmr_reference.md section 5.
  kSlowTokenizer,
  // HF tokenizers `truncate_encodings` (Rust): XLMRobertaTokenizerFast, the one
  // AutoTokenizer returns by default, and the only XLMRobertaTokenizer in transformers 5.
  kFastTokenizer,
};

// Lengths that `longest_first` keeps of two texts with `len_a` and `len_b` tokens when only
// `budget` tokens fit (budget = max_length - 4). Returns {len_a, len_b} when they fit.
// Requires len_a, len_b, budget >= 0.
std::pair<int64_t, int64_t> PairKeepLengths(int64_t len_a, int64_t len_b, int64_t budget,
                                            PairTruncation rule);

class XlmrTokenizer final : public TextTokenizer {
 public:
  static constexpr int32_t kBos = 0;  // <s>, also the classification token
  static constexpr int32_t kPad = 1;  // <pad> = config pad_token_id
  static constexpr int32_t kEos = 2;  // </s>, also the separator
  static constexpr int32_t kUnk = 3;  // <unk>
  static constexpr int kSpecialTokensSingle = 2;
  static constexpr int kSpecialTokensPair = 4;

  // Loads a SentencePiece .model file (xlm-roberta's `sentencepiece.bpe.model`, a unigram model
  // despite its name). Errors name the file: missing or unparsable file, a model whose <unk>,
  // <s>, </s> are not SentencePiece ids 0, 1, 2 (the fairseq mapping assumes them), or a model
  // too large for the embedding table: spm_size() + 2 > vocab_size (the config's), which would
  // let an id index past the table.
  static absl::StatusOr<XlmrTokenizer> Load(const std::string& sentencepiece_model_path,
                                            int64_t vocab_size);

  XlmrTokenizer(XlmrTokenizer&&) noexcept;
  XlmrTokenizer& operator=(XlmrTokenizer&&) noexcept;
  ~XlmrTokenizer() override;

  // Model ids of `text` without special tokens (HF `tokenizer(text, add_special_tokens=False)`).
  // Any UTF-8 text is accepted; characters the model cannot spell become kUnk.
  std::vector<int32_t> EncodeText(absl::string_view text) const;

  // EncodeText's ids and, per id, the bytes of `text` it stands for: Hugging Face's fast
  // tokenizer's `offset_mapping` (return_offsets_mapping=True, add_special_tokens=False), which
  // counts characters where this counts bytes. A token's span covers the characters its
  // normalized text came from: no whitespace, none of the characters the normalizer removes, a
  // lone "▁" token the first character of its word (models/xlmr/piece_offsets.h has the rules
  // and the one kind of text where they fall back to SentencePiece's own spans).
  std::vector<int32_t> EncodeTextWithOffsets(absl::string_view text,
                                             std::vector<TokenSpan>* spans) const override;

  // Model ids with special tokens for a text or a text pair, cut to at most `max_length` ids
  // with `longest_first` (single: cut the right end of A; pair: `rule`). A present but empty
  // `pair` is a pair with no tokens ([0] + A + [2, 2, 2]), as in HF's slow tokenizer.
  // Requires max_length >= 2 (single) or 4 (pair): the caller validates its flag.
  Encoding Encode(absl::string_view text, std::optional<absl::string_view> pair, int max_length,
                  PairTruncation rule) const;
  // The fast tokenizer's rule: what AutoTokenizer gives HF Trainer users (TextTokenizer's).
  Encoding Encode(absl::string_view text, std::optional<absl::string_view> pair,
                  int max_length) const override {
    return Encode(text, pair, max_length, PairTruncation::kFastTokenizer);
  }

  // Model ids of a sentence given as words, as Hugging Face's fast tokenizer gives them for
  // tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length):
  // [0] + pieces of word 0 + pieces of word 1 + ... + [2], cut on the right to max_length ids
  // (</s> kept). Each word is tokenized on its own exactly as EncodeText(word) does: HF's
  // pre-tokenizer (WhitespaceSplit, then Metaspace with prepend_scheme "always") gives every
  // word its own leading "▁", which SentencePiece's dummy prefix adds too, and spaces
  // inside a word split it into pieces of that same word. A word SentencePiece spells with
  // no piece (whitespace, or characters its normalizer removes such as U+200B in some models)
  // gets no token and appears in no word_ids, as in HF. Words cut off by truncation appear in
  // no word_ids either. Requires max_length >= 2.
  WordEncoding EncodeWords(const std::vector<std::string>& words, int max_length) const override;

  // Number of SentencePiece pieces (250000 for xlm-roberta).
  int64_t spm_size() const;
  // Id of <mask> (spm_size() + 1).
  int32_t mask_id() const { return static_cast<int32_t>(spm_size() + 1); }

  int32_t bos_id() const override { return kBos; }
  int32_t eos_id() const override { return kEos; }
  int32_t pad_id() const override { return kPad; }
  int special_tokens_single() const override { return kSpecialTokensSingle; }
  int special_tokens_pair() const override { return kSpecialTokensPair; }

 private:
  explicit XlmrTokenizer(std::unique_ptr<internal::SentencePieceModel> model);

  std::unique_ptr<internal::SentencePieceModel> model_;
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_XLMR_TOKENIZER_H_
