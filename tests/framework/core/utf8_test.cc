#include "framework/core/utf8.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace xlmr::core {
namespace {

TEST(Utf8Test, CharStartsCountCodePoints) {
  // a (1 byte), é (2), € (3), 😀 (4): Python's len() is 4.
  const std::string text = "a\u00e9\u20ac\U0001F600";
  EXPECT_EQ(Utf8CharStarts(text), (std::vector<size_t>{0, 1, 3, 6, 10}));
  EXPECT_EQ(Utf8CharStarts(""), (std::vector<size_t>{0}));
}

TEST(Utf8Test, MalformedBytesAreOneCharacterEach) {
  // A lone continuation byte, a truncated 3-byte sequence, an overlong 2-byte form, a surrogate.
  EXPECT_EQ(Utf8CharStarts("\x80"
                           "a"),
            (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(Utf8CharStarts("\xE2\x82"), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(Utf8CharStarts("\xC0\xAF"), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(Utf8CharStarts("\xED\xA0\x80"), (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(Utf8Test, ByteOffsetOfChar) {
  const std::string text = "a\u00e9\u20ac";
  EXPECT_EQ(ByteOffsetOfChar(text, 0), 0u);
  EXPECT_EQ(ByteOffsetOfChar(text, 2), 3u);
  EXPECT_EQ(ByteOffsetOfChar(text, 3), 6u);  // the end
  EXPECT_EQ(ByteOffsetOfChar(text, 4), std::nullopt);
  EXPECT_EQ(ByteOffsetOfChar(text, -1), std::nullopt);
}

}  // namespace
}  // namespace xlmr::core
