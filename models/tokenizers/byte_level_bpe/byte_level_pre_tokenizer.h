// GPT-2's byte-level pre-tokenization, as Hugging Face tokenizers' ByteLevel pre-tokenizer runs it
// for RoBERTa (add_prefix_space as configured, use_regex true):
//
//   1. add_prefix_space: a text (or a word of a pre-split sentence) that does not start with
//      U+0020 gets one in front; that space stands for the text's first character.
//   2. The text is cut with GPT-2's pattern, every character in exactly one piece:
//        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//      written here by hand over code points (no regex library): at each position the first
//      alternative that matches wins. "\s" is Unicode's White_Space property, as in the
//      Oniguruma engine that tokenizers uses; " ?" is U+0020 only; a run of whitespace before a
//      non-space keeps its last character back for the next piece (the "(?!\S)").
//   3. Each piece's UTF-8 bytes are spelled with GPT-2's byte-to-unicode alphabet (every byte a
//      printable character: "!".."~", U+00A1..U+00AC and U+00AE..U+00FF stand for themselves,
//      the other 68 bytes for U+0100.. in byte order, so the space is "Ġ" U+0120), the
//      alphabet of vocab.json and merges.txt.
//
// Letters and numbers are Unicode general categories L* and N* from utf8proc, plus those that
// Unicode 15.1 and 16.0 added (newer_unicode_letters.h), as tokenizers' Oniguruma knows them. A byte of
// malformed UTF-8 is a character of its own (framework/core/utf8.h's rule) of class "other".
#ifndef XLMR_MODELS_TOKENIZERS_BYTE_LEVEL_BPE_BYTE_LEVEL_PRE_TOKENIZER_H_
#define XLMR_MODELS_TOKENIZERS_BYTE_LEVEL_BPE_BYTE_LEVEL_PRE_TOKENIZER_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "models/tokenizers/text_tokenizer.h"

namespace xlmr::models::roberta {

// The classes GPT-2's pattern tells apart.
enum class CharClass {
  kLetter,      // \p{L}: general category Lu, Ll, Lt, Lm, Lo
  kNumber,      // \p{N}: Nd, Nl, No
  kWhitespace,  // \s: White_Space (tab..CR, space, U+0085, U+00A0, U+1680, U+2000..U+200A,
                // U+2028, U+2029, U+202F, U+205F, U+3000)
  kOther,       // everything else: punctuation, symbols, marks, controls, unassigned
};

// The class of code point `code_point`; kOther for values that are not code points.
CharClass ClassifyCodePoint(int32_t code_point);

// One piece of the pre-tokenized text, before the byte-to-unicode spelling.
struct PreToken {
  // The piece's UTF-8 bytes, a prepended space included.
  std::string bytes;
  // For each byte of `bytes`: the bytes of the original text its character came from (the
  // whole character, also for its second to fourth byte; the prepended space stands for the
  // first character of the text). Offsets are into the text given to ByteLevelPreTokenize.
  std::vector<TokenSpan> sources;
};

// Cuts `text` (any bytes) into GPT-2's pieces. Returns the pieces in order; their bytes joined
// are `text` (with " " in front when add_prefix_space added it). An empty text gives no piece
// (no prefix space either).
std::vector<PreToken> ByteLevelPreTokenize(absl::string_view text, bool add_prefix_space);

// GPT-2's byte-to-unicode alphabet: the UTF-8 of the character that spells byte b.
const std::array<std::string, 256>& ByteLevelAlphabet();

}  // namespace xlmr::models::roberta

#endif  // XLMR_MODELS_TOKENIZERS_BYTE_LEVEL_BPE_BYTE_LEVEL_PRE_TOKENIZER_H_
