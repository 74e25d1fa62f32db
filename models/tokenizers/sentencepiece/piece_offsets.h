// Which bytes of the original text each SentencePiece piece stands for, as Hugging Face's fast
// tokenizer (XLMRobertaTokenizerFast, tokenizers' Rust pipeline) reports them in
// `offset_mapping`. Private to models/encoder: use SentencePieceTokenizer::EncodeTextWithOffsets.
//
// SentencePiece's own spans differ from HF's: its "▁" piece prefix owns the space (or spaces)
// before a word, where HF's pre-tokenizer (WhitespaceSplit, then Metaspace) drops the spaces and
// aligns the "▁" it prepends to the word's first character. So a token's span here is HF's:
// the original characters its normalized characters came from, where
//   * a character the normalizer removes (U+200B, U+200F, ...) and whitespace belong to no token;
//   * every normalized character of an expansion ("ﬁ" -> "fi", "…" -> "...") belongs to the one
//     original character, so a piece with part of it covers all of it;
//   * a pair whose normalization is not that of its characters one by one (a base letter and a
//     combining accent composed to one letter) is replaced as HF's Precompiled normalizer
//     replaces a grapheme: the k-th new character belongs to the k-th old one (the last old one
//     for any extra), old characters left over belong to none;
//   * a piece that is only "▁" covers the first character of the word it starts.
// Where SentencePiece's normalization is not reproduced by this per-character (or per-pair)
// view, e.g. three Hangul jamo composed into one syllable, the spans fall back to
// SentencePiece's own (HF normalizes such text differently, so its ids differ there too).
#ifndef XLMR_MODELS_TOKENIZERS_SENTENCEPIECE_PIECE_OFFSETS_H_
#define XLMR_MODELS_TOKENIZERS_SENTENCEPIECE_PIECE_OFFSETS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "models/tokenizers/sentencepiece/sentencepiece_model.h"

namespace xlmr::models::internal {

// [begin, end) bytes of the original text.
struct ByteSpan {
  int64_t begin = 0;
  int64_t end = 0;
};

// The normalized text of a string as the model's normalizer spells it ("▁" for spaces inside,
// no dummy "▁" in front, nothing for whitespace only).
using NormalizeFn = std::function<std::string(absl::string_view)>;

// One span per piece of `pieces`, the segmentation of `text`.
std::vector<ByteSpan> AlignPieces(absl::string_view text, const std::vector<SentencePiece>& pieces,
                                  const NormalizeFn& normalize);

}  // namespace xlmr::models::internal

#endif  // XLMR_MODELS_TOKENIZERS_SENTENCEPIECE_PIECE_OFFSETS_H_
