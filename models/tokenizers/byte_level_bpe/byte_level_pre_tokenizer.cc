#include "models/tokenizers/byte_level_bpe/byte_level_pre_tokenizer.h"

#include <utf8proc.h>

#include <cstddef>

#include "framework/core/utf8.h"
#include "models/tokenizers/byte_level_bpe/newer_unicode_letters.h"

namespace xlmr::models::roberta {
namespace {

constexpr int32_t kSpace = 0x20;
constexpr int32_t kApostrophe = 0x27;
constexpr int32_t kNotACodePoint = -1;

bool IsWhiteSpace(int32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// One character of the text the pattern runs over.
struct Char {
  int32_t code_point = kNotACodePoint;
  CharClass cls = CharClass::kOther;
  absl::string_view bytes;  // into the text, or the literal " " of a prepended space
  TokenSpan source;         // bytes of the original text it stands for
};

int32_t DecodeCodePoint(absl::string_view bytes) {
  utf8proc_int32_t code_point = kNotACodePoint;
  const utf8proc_ssize_t used = utf8proc_iterate(
      reinterpret_cast<const utf8proc_uint8_t*>(bytes.data()),
      static_cast<utf8proc_ssize_t>(bytes.size()), &code_point);
  return used == static_cast<utf8proc_ssize_t>(bytes.size()) ? code_point : kNotACodePoint;
}

std::vector<Char> SplitCharacters(absl::string_view text, bool add_prefix_space) {
  std::vector<Char> chars;
  for (size_t pos = 0; pos < text.size();) {
    const size_t length = core::Utf8CharLength(text, pos);
    Char c;
    c.bytes = text.substr(pos, length);
    c.code_point = DecodeCodePoint(c.bytes);
    c.cls = ClassifyCodePoint(c.code_point);
    c.source = {static_cast<int64_t>(pos), static_cast<int64_t>(pos + length)};
    chars.push_back(c);
    pos += length;
  }
  // tokenizers prepends only when the text does not already start with U+0020 (other
  // whitespace gets the space too), and never to an empty text.
  if (add_prefix_space && !chars.empty() && chars.front().code_point != kSpace) {
    Char space;
    space.code_point = kSpace;
    space.cls = CharClass::kWhitespace;
    space.bytes = " ";
    space.source = chars.front().source;
    chars.insert(chars.begin(), space);
  }
  return chars;
}

bool IsAsciiLetter(const std::vector<Char>& chars, size_t i, char letter) {
  return i < chars.size() && chars[i].code_point == letter;
}

// Length of the contraction ('s 't 're 've 'm 'll 'd, lower case only) at i, or 0.
size_t ContractionLength(const std::vector<Char>& chars, size_t i) {
  if (chars[i].code_point != kApostrophe) return 0;
  for (char single : {'s', 't', 'm', 'd'}) {
    if (IsAsciiLetter(chars, i + 1, single)) return 2;
  }
  if (IsAsciiLetter(chars, i + 1, 'r') && IsAsciiLetter(chars, i + 2, 'e')) return 3;
  if (IsAsciiLetter(chars, i + 1, 'v') && IsAsciiLetter(chars, i + 2, 'e')) return 3;
  if (IsAsciiLetter(chars, i + 1, 'l') && IsAsciiLetter(chars, i + 2, 'l')) return 3;
  return 0;
}

// End of the run of class `cls` starting at i (i itself when chars[i] is not of that class).
size_t RunEnd(const std::vector<Char>& chars, size_t i, CharClass cls) {
  while (i < chars.size() && chars[i].cls == cls) ++i;
  return i;
}

// " ?X+" for X = letters, numbers or others: the length matched at i, or 0.
size_t OptionalSpaceThenRun(const std::vector<Char>& chars, size_t i, CharClass cls) {
  const size_t first = chars[i].code_point == kSpace && i + 1 < chars.size() &&
                               chars[i + 1].cls == cls
                           ? i + 1
                           : i;
  const size_t end = RunEnd(chars, first, cls);
  return end > first ? end - i : 0;
}

// "\s+(?!\S)|\s+" at i (chars[i] is whitespace): the whole run at the end of the text; a run
// before a non-space without its last character, unless that leaves nothing.
size_t WhitespaceLength(const std::vector<Char>& chars, size_t i) {
  const size_t end = RunEnd(chars, i, CharClass::kWhitespace);
  if (end == chars.size() || end - i == 1) return end - i;
  return end - i - 1;
}

// Length of GPT-2's match at i: the first alternative of the pattern that matches.
size_t MatchLength(const std::vector<Char>& chars, size_t i) {
  if (size_t n = ContractionLength(chars, i)) return n;
  for (CharClass cls : {CharClass::kLetter, CharClass::kNumber, CharClass::kOther}) {
    if (size_t n = OptionalSpaceThenRun(chars, i, cls)) return n;
  }
  return WhitespaceLength(chars, i);  // every character not matched above is whitespace
}

PreToken MakePreToken(const std::vector<Char>& chars, size_t begin, size_t end) {
  PreToken piece;
  for (size_t i = begin; i < end; ++i) {
    piece.bytes.append(chars[i].bytes.data(), chars[i].bytes.size());
    piece.sources.insert(piece.sources.end(), chars[i].bytes.size(), chars[i].source);
  }
  return piece;
}

std::array<std::string, 256> BuildAlphabet() {
  std::array<std::string, 256> alphabet;
  int32_t next_shifted = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    const int32_t code_point = printable ? b : next_shifted++;
    utf8proc_uint8_t utf8[4];
    const utf8proc_ssize_t length = utf8proc_encode_char(code_point, utf8);
    alphabet[b].assign(reinterpret_cast<const char*>(utf8), static_cast<size_t>(length));
  }
  return alphabet;
}

}  // namespace

CharClass ClassifyCodePoint(int32_t code_point) {
  if (code_point < 0 || code_point > 0x10FFFF) return CharClass::kOther;
  if (IsWhiteSpace(code_point)) return CharClass::kWhitespace;
  switch (utf8proc_category(code_point)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
      return CharClass::kLetter;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
      return CharClass::kNumber;
    case UTF8PROC_CATEGORY_CN:
      return ClassifyNewerCodePoint(code_point);  // assigned after utf8proc's Unicode
    default:
      return CharClass::kOther;
  }
}

std::vector<PreToken> ByteLevelPreTokenize(absl::string_view text, bool add_prefix_space) {
  const std::vector<Char> chars = SplitCharacters(text, add_prefix_space);
  std::vector<PreToken> pieces;
  for (size_t i = 0; i < chars.size();) {
    const size_t length = MatchLength(chars, i);
    pieces.push_back(MakePreToken(chars, i, i + length));
    i += length;
  }
  return pieces;
}

const std::array<std::string, 256>& ByteLevelAlphabet() {
  static const std::array<std::string, 256>* alphabet =
      new std::array<std::string, 256>(BuildAlphabet());
  return *alphabet;
}

}  // namespace xlmr::models::roberta
