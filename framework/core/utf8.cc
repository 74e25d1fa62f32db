#include "framework/core/utf8.h"

namespace xlmr::core {
namespace {

bool IsContinuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

size_t Utf8CharLength(absl::string_view text, size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  size_t length = 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
  }
  if (length == 1 || pos + length > text.size()) return 1;
  for (size_t i = 1; i < length; ++i) {
    if (!IsContinuation(static_cast<unsigned char>(text[pos + i]))) return 1;
  }
  const auto second = static_cast<unsigned char>(text[pos + 1]);
  // Overlong forms, UTF-16 surrogates and code points above U+10FFFF are not valid.
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) ||
      (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F)) {
    return 1;
  }
  return length;
}

std::vector<size_t> Utf8CharStarts(absl::string_view text) {
  std::vector<size_t> starts;
  starts.reserve(text.size() + 1);
  for (size_t pos = 0; pos < text.size(); pos += Utf8CharLength(text, pos)) {
    starts.push_back(pos);
  }
  starts.push_back(text.size());
  return starts;
}

std::optional<size_t> ByteOffsetOfChar(absl::string_view text, int64_t char_index) {
  if (char_index < 0) return std::nullopt;
  size_t pos = 0;
  for (int64_t i = 0; i < char_index; ++i) {
    if (pos >= text.size()) return std::nullopt;
    pos += Utf8CharLength(text, pos);
  }
  return pos;
}

}  // namespace xlmr::core
