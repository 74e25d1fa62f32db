// SentencePiece tokenizer of the XLM-R and CamemBERT families: a SentencePiece unigram model
// plus the family's id mapping (SentencePieceIdMapping), producing the same input_ids as Hugging
// Face's XLMRobertaTokenizer / CamembertTokenizer (fast).
//
//   XLMR_ASSIGN_OR_RETURN(SentencePieceTokenizer tokenizer,
//                         SentencePieceTokenizer::Load(dir + "/sentencepiece.bpe.model", config.vocab_size));
//   Encoding e = tokenizer.Encode("premise", std::string("hypothesis"), /*max_length=*/128);
//
// Id mapping (the fairseq dictionary each family's checkpoint was trained with, as transformers'
// convert_slow_tokenizer.py rebuilds it; SentencePieceIdMapping below):
//   XLM-R      ids 0 <s>, 1 <pad>, 2 </s>, 3 <unk>; SentencePiece id i >= 3 -> i + 1;
//              <mask> = spm_size() + 1; spm_size() + 2 rows (250002 for xlm-roberta).
//   CamemBERT  ids 0 <s>NOTUSED, 1 <pad>, 2 </s>NOTUSED, 3 <unk>, 4 <unk>NOTUSED; SentencePiece
//              id i >= 1 -> i + 4, so its own <s> (1) and </s> (2) are 5 and 6, the ids the
//              sequences use; <mask> = spm_size() + 4; spm_size() + 5 rows (32005 for
//              camembert-base).
//   Both: SentencePiece <unk> (0) -> 3.
// Sequences: single `<s> A </s>` = [bos] + A + [eos]; pair `<s> A </s></s> B </s>` =
//   [bos] + A + [eos, eos] + B + [eos]. token_type_ids are all zero (type_vocab_size 1), so none
//   are returned. No padding here: the batcher pads on the right with pad_id() and attention 0.
//
// Known difference from HF: HF's tokenizers first split the raw text on the literal strings of
// special tokens ("<s>", "</s>", "<pad>", "<unk>", "<mask>", CamemBERT's "...NOTUSED") and map
// those to their ids; this tokenizer hands all text to SentencePiece, which spells such strings
// as ordinary pieces. And where HF's pre-tokenizer and SentencePiece disagree, this follows
// SentencePiece: U+2028, U+2029, U+0085, U+1680 (HF splits words there), a C0 control character
// the model has a piece for (HF: <unk>), a no-break or ideographic space before a combining mark
// (HF: no token); tests/models/tokenizers/sentencepiece/testdata/make_camembert_testdata.py lists such texts.
#ifndef XLMR_MODELS_TOKENIZERS_SENTENCEPIECE_SENTENCEPIECE_TOKENIZER_H_
#define XLMR_MODELS_TOKENIZERS_SENTENCEPIECE_SENTENCEPIECE_TOKENIZER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "models/tokenizers/post_processing.h"
#include "models/tokenizers/text_tokenizer.h"

namespace xlmr::models {

namespace internal {
class SentencePieceModel;
}  // namespace internal

// How a family numbers SentencePiece's pieces. The vocabulary is `reserved` (model ids
// 0..reserved.size()-1), then SentencePiece's pieces from `first_piece` on in their order, then
// <mask>: piece i >= first_piece has model id i - first_piece + reserved.size(). SentencePiece's
// <unk> (id 0, never in the vocabulary as itself) is `unk_id`. The ids below first_piece must be
// SentencePiece's <unk>, <s>, </s> in that order (the pieces the reserved block replaces).
// A special token's id (bos_id, eos_id, pad_id) is its spelling's id in that vocabulary, the
// later one when a piece repeats a reserved spelling: transformers' Unigram builds its
// token-to-id map in vocabulary order, a later entry overwriting an earlier one.
struct SentencePieceIdMapping {
  const char* family;                 // names the mapping in error messages
  std::vector<std::string> reserved;  // the tokens ahead of the pieces
  int first_piece;                    // 1 or 3: the SentencePiece ids below it are replaced
  int32_t unk_id;                     // model id of SentencePiece's <unk>

  // The model id of SentencePiece piece `spm_id` >= first_piece (also of the id one past the
  // last piece: <mask>'s).
  int32_t PieceModelId(int64_t spm_id) const {
    return static_cast<int32_t>(spm_id - first_piece + static_cast<int64_t>(reserved.size()));
  }

  // transformers' XLMRobertaConverter: <s> <pad> </s> <unk>, pieces from 3 (id i + 1).
  static const SentencePieceIdMapping& XlmRoberta();
  // transformers' CamembertConverter: <s>NOTUSED <pad> </s>NOTUSED <unk> <unk>NOTUSED, pieces
  // from 1 (id i + 4; <s> 5 and </s> 6 in SentencePiece's default numbering).
  static const SentencePieceIdMapping& Camembert();
};

class SentencePieceTokenizer final : public TextTokenizer {
 public:
  // XLM-R's special ids (SentencePieceIdMapping::XlmRoberta()); CamemBERT's bos, eos and pad
  // come from its model: use bos_id(), eos_id(), pad_id(), which hold for both. kUnk is both
  // families' <unk>.
  static constexpr int32_t kBos = 0;  // <s>, also the classification token
  static constexpr int32_t kPad = 1;  // <pad> = config pad_token_id
  static constexpr int32_t kEos = 2;  // </s>, also the separator
  static constexpr int32_t kUnk = 3;  // <unk>
  static constexpr int kSpecialTokensSingle = kRobertaStyleSpecialTokensSingle;
  static constexpr int kSpecialTokensPair = kRobertaStyleSpecialTokensPair;

  // Loads a SentencePiece .model file (the family's `sentencepiece.bpe.model`, a unigram model
  // despite its name) numbered by `mapping`. Errors name the file: missing or unparsable file,
  // a model whose ids below mapping.first_piece are not its <unk>, <s>, </s> (the mapping
  // assumes them), a vocabulary without "<s>", "</s>" or "<pad>", or a model too large for the
  // embedding table: mask_id() + 1 > vocab_size (the config's; spm_size() + 2 for XLM-R), which
  // would let an id index past the table.
  static absl::StatusOr<SentencePieceTokenizer> Load(
      const std::string& sentencepiece_model_path, int64_t vocab_size,
      const SentencePieceIdMapping& mapping = SentencePieceIdMapping::XlmRoberta());

  SentencePieceTokenizer(SentencePieceTokenizer&&) noexcept;
  SentencePieceTokenizer& operator=(SentencePieceTokenizer&&) noexcept;
  ~SentencePieceTokenizer() override;

  // Model ids of `text` without special tokens (HF `tokenizer(text, add_special_tokens=False)`).
  // Any UTF-8 text is accepted; characters the model cannot spell become kUnk (3).
  std::vector<int32_t> EncodeText(absl::string_view text) const;

  // EncodeText's ids and, per id, the bytes of `text` it stands for: Hugging Face's fast
  // tokenizer's `offset_mapping` (return_offsets_mapping=True, add_special_tokens=False), which
  // counts characters where this counts bytes. A token's span covers the characters its
  // normalized text came from: no whitespace, none of the characters the normalizer removes, a
  // lone "▁" token the first character of its word (models/tokenizers/sentencepiece/piece_offsets.h has the rules
  // and the one kind of text where they fall back to SentencePiece's own spans).
  std::vector<int32_t> EncodeTextWithOffsets(absl::string_view text,
                                             std::vector<TokenSpan>* spans) const override;

  // Model ids with special tokens for a text or a text pair, cut to at most `max_length` ids
  // with `longest_first` (single: cut the right end of A; pair: `rule`). A present but empty
  // `pair` is a pair with no tokens ([bos] + A + [eos, eos, eos]), as in HF's slow tokenizer.
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
  // [bos] + pieces of word 0 + pieces of word 1 + ... + [eos], cut on the right to max_length ids
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
  // Id of <mask>, the vocabulary's last (XLM-R spm_size() + 1, CamemBERT spm_size() + 4).
  int32_t mask_id() const;

  int32_t bos_id() const override { return bos_id_; }
  int32_t eos_id() const override { return eos_id_; }
  int32_t pad_id() const override { return pad_id_; }
  int special_tokens_single() const override { return kSpecialTokensSingle; }
  int special_tokens_pair() const override { return kSpecialTokensPair; }

 private:
  SentencePieceTokenizer(std::unique_ptr<internal::SentencePieceModel> model,
                const SentencePieceIdMapping& mapping);

  // The model id of a SentencePiece id that plain text yields (0 or >= first_piece).
  int32_t ToModelId(int spm_id) const;

  std::unique_ptr<internal::SentencePieceModel> model_;
  SentencePieceIdMapping mapping_;
  int32_t bos_id_ = kBos;
  int32_t eos_id_ = kEos;
  int32_t pad_id_ = kPad;
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_TOKENIZERS_SENTENCEPIECE_SENTENCEPIECE_TOKENIZER_H_
