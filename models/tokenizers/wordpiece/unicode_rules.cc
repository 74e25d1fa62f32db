#include "models/tokenizers/wordpiece/unicode_rules.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace xlmr::models::bert {
namespace {

struct CodePointRange {
  char32_t first;
  char32_t last;
};

struct LowercaseException {
  char32_t cp;
  const char* utf8;  // tokenizers' lower-case form
};

#include "models/tokenizers/wordpiece/hf_unicode_tables.inc"

template <size_t N>
bool InRanges(const CodePointRange (&ranges)[N], char32_t cp) {
  const CodePointRange* it =
      std::upper_bound(ranges, ranges + N, cp,
                       [](char32_t value, const CodePointRange& r) { return value < r.first; });
  return it != ranges && cp <= std::prev(it)->last;
}

utf8proc_category_t Category(char32_t cp) {
  return utf8proc_category(static_cast<utf8proc_int32_t>(cp));
}

// `base` amended by the two tables of code points where tokenizers says otherwise.
template <size_t N, size_t M>
bool Amended(bool base, const CodePointRange (&extra)[N], const CodePointRange (&missing)[M],
             char32_t cp) {
  return base ? !InRanges(missing, cp) : InRanges(extra, cp);
}

bool IsAsciiPunctuation(char32_t cp) {
  return (cp >= 0x21 && cp <= 0x2F) || (cp >= 0x3A && cp <= 0x40) || (cp >= 0x5B && cp <= 0x60) ||
         (cp >= 0x7B && cp <= 0x7E);
}

void AppendUtf8(const char* utf8, std::u32string* out) {
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(utf8);
  utf8proc_int32_t cp = 0;
  for (utf8proc_ssize_t used; *bytes != 0; bytes += used) {
    used = utf8proc_iterate(bytes, -1, &cp);
    out->push_back(static_cast<char32_t>(cp));
  }
}

}  // namespace

bool IsRemovedByCleanText(char32_t cp) {
  const utf8proc_category_t category = Category(cp);
  const bool control = category == UTF8PROC_CATEGORY_CC && cp != '\t' && cp != '\n' && cp != '\r';
  const bool base = cp == 0 || cp == 0xFFFD || control || category == UTF8PROC_CATEGORY_CF ||
                    category == UTF8PROC_CATEGORY_CO;
  return Amended(base, kRemovedExtra, kRemovedMissing, cp);
}

bool IsBertWhitespace(char32_t cp) {
  const utf8proc_category_t category = Category(cp);
  const bool base = cp == '\t' || cp == '\n' || cp == '\r' || category == UTF8PROC_CATEGORY_ZS ||
                    category == UTF8PROC_CATEGORY_ZL || category == UTF8PROC_CATEGORY_ZP;
  return Amended(base, kWhitespaceExtra, kWhitespaceMissing, cp);
}

bool IsBertPunctuation(char32_t cp) {
  const utf8proc_category_t category = Category(cp);
  const bool base = IsAsciiPunctuation(cp) || category == UTF8PROC_CATEGORY_PC ||
                    category == UTF8PROC_CATEGORY_PD || category == UTF8PROC_CATEGORY_PS ||
                    category == UTF8PROC_CATEGORY_PE || category == UTF8PROC_CATEGORY_PI ||
                    category == UTF8PROC_CATEGORY_PF || category == UTF8PROC_CATEGORY_PO;
  return Amended(base, kPunctuationExtra, kPunctuationMissing, cp);
}

bool IsChineseChar(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
         (cp >= 0x20000 && cp <= 0x2A6DF) || (cp >= 0x2A700 && cp <= 0x2B73F) ||
         (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool IsStrippedMark(char32_t cp) {
  return Amended(Category(cp) == UTF8PROC_CATEGORY_MN, kStrippedMarkExtra, kStrippedMarkMissing,
                 cp);
}

void AppendDecomposition(char32_t cp, std::u32string* out) {
  if (InRanges(kNfdKeptWhole, cp)) {
    out->push_back(cp);
    return;
  }
  // A canonical decomposition is at most 4 code points (Hangul 3); 16 leaves room to spare.
  utf8proc_int32_t buffer[16];
  int last_boundclass = 0;
  const utf8proc_ssize_t n = utf8proc_decompose_char(
      static_cast<utf8proc_int32_t>(cp), buffer, 16, UTF8PROC_DECOMPOSE, &last_boundclass);
  if (n < 0 || n > 16) {  // not a valid code point: keep it as it is
    out->push_back(cp);
    return;
  }
  for (utf8proc_ssize_t i = 0; i < n; ++i) out->push_back(static_cast<char32_t>(buffer[i]));
}

int CombiningClass(char32_t cp) {
  if (InRanges(kStarterInTokenizers, cp)) return 0;
  return utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class;
}

void AppendLowercase(char32_t cp, std::u32string* out) {
  const LowercaseException* it = std::lower_bound(
      std::begin(kLowercaseExceptions), std::end(kLowercaseExceptions), cp,
      [](const LowercaseException& e, char32_t value) { return e.cp < value; });
  if (it != std::end(kLowercaseExceptions) && it->cp == cp) {
    AppendUtf8(it->utf8, out);
    return;
  }
  out->push_back(static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
}

}  // namespace xlmr::models::bert
