// BERT's text normalization and word splitting: what Hugging Face tokenizers' BertNormalizer
// followed by BertPreTokenizer produce, with each word's characters traced back to the bytes of
// the input they came from (for offset_mapping).
//
// Normalization, in tokenizers' order (normalizers/bert.rs):
//   1. clean_text: drop NUL, U+FFFD, control, format and private-use characters; every
//      whitespace character becomes ' ' (unicode_rules.h has the classes);
//   2. handle_chinese_chars: ' ' before and after every CJK ideograph;
//   3. strip_accents: NFD (with canonical reordering of marks), then drop nonspacing marks;
//   4. lowercase: each character to its lower-case form (possibly several characters).
// Accents are stripped before lower-casing: strip_accents unset means "as do_lower_case"
// (BertTokenizerOptions resolves that). Every character a step outputs keeps the input span of
// the character it came from, as tokenizers' alignments do.
// Pre-tokenization (pre_tokenizers/bert.rs): split on whitespace (dropped), then every
// punctuation character becomes a word of its own.
#ifndef XLMR_MODELS_TOKENIZERS_WORDPIECE_BASIC_PRE_TOKENIZER_H_
#define XLMR_MODELS_TOKENIZERS_WORDPIECE_BASIC_PRE_TOKENIZER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "models/tokenizers/text_tokenizer.h"

namespace xlmr::models::bert {

struct NormalizerOptions {
  bool lowercase = true;
  bool strip_accents = true;
  bool handle_chinese_chars = true;
};

// One word after normalization and splitting.
struct PreToken {
  std::string text;  // normalized, UTF-8
  // [text.size()]: for each byte of `text`, the bytes of the input its character came from.
  std::vector<TokenSpan> byte_sources;
};

// Normalizes `input` and splits it into words, in order. Spans are input offsets plus `base`
// (the caller's position of `input` in a larger text). Any bytes are accepted: a byte that does
// not start a valid UTF-8 sequence counts as U+FFFD and is dropped like it (Hugging Face only
// ever sees valid text).
std::vector<PreToken> PreTokenize(absl::string_view input, int64_t base,
                                  const NormalizerOptions& options);

}  // namespace xlmr::models::bert

#endif  // XLMR_MODELS_TOKENIZERS_WORDPIECE_BASIC_PRE_TOKENIZER_H_
