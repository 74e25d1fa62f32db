// Walking UTF-8 text one character (code point) at a time, and converting between byte offsets
// and character offsets. Python strings, and so every character offset Hugging Face reports
// (SQuAD's answer_start, a fast tokenizer's offset_mapping), count code points; our strings are
// UTF-8 bytes.
//
// Malformed bytes follow SentencePiece's rule: a byte that does not start a complete, valid
// sequence is one character on its own. Well-formed text (what a JSON parser accepts) never
// meets that rule.
#ifndef XLMR_FRAMEWORK_CORE_UTF8_H_
#define XLMR_FRAMEWORK_CORE_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/string_view.h"

namespace xlmr::core {

// Bytes of the character that starts at text[pos] (1 to 4). Requires pos < text.size().
size_t Utf8CharLength(absl::string_view text, size_t pos);

// The byte offset where each character of `text` starts, plus text.size() at the end:
// result[i] is the byte offset of character i, result.size() == characters + 1.
std::vector<size_t> Utf8CharStarts(absl::string_view text);

// Byte offset of character `char_index` (== text.size() for the end), or nullopt when the
// text has fewer characters (or char_index < 0).
std::optional<size_t> ByteOffsetOfChar(absl::string_view text, int64_t char_index);

}  // namespace xlmr::core

#endif  // XLMR_FRAMEWORK_CORE_UTF8_H_
