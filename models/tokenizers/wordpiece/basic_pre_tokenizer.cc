#include "models/tokenizers/wordpiece/basic_pre_tokenizer.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "models/tokenizers/wordpiece/unicode_rules.h"

namespace xlmr::models::bert {
namespace {

// A normalized character and the input span it came from.
struct SourcedChar {
  char32_t cp;
  TokenSpan source;
};
using SourcedText = std::vector<SourcedChar>;

// The code points of `input`, each with its byte span (plus `base`). An invalid byte is one
// U+FFFD.
SourcedText Decode(absl::string_view input, int64_t base) {
  SourcedText out;
  const auto* bytes = reinterpret_cast<const utf8proc_uint8_t*>(input.data());
  const auto size = static_cast<utf8proc_ssize_t>(input.size());
  for (utf8proc_ssize_t pos = 0; pos < size;) {
    utf8proc_int32_t cp = 0;
    utf8proc_ssize_t used = utf8proc_iterate(bytes + pos, size - pos, &cp);
    if (used <= 0) {
      cp = 0xFFFD;
      used = 1;
    }
    out.push_back({static_cast<char32_t>(cp), {base + pos, base + pos + used}});
    pos += used;
  }
  return out;
}

// Steps 1 and 2: clean_text and handle_chinese_chars.
SourcedText CleanAndSpaceChinese(const SourcedText& in, bool handle_chinese_chars) {
  SourcedText out;
  out.reserve(in.size());
  for (const SourcedChar& c : in) {
    if (IsRemovedByCleanText(c.cp)) continue;
    if (IsBertWhitespace(c.cp)) {
      out.push_back({U' ', c.source});
    } else if (handle_chinese_chars && IsChineseChar(c.cp)) {
      out.push_back({U' ', c.source});
      out.push_back(c);
      out.push_back({U' ', c.source});
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// One character of NFD's output: the first of its input character's decomposition, or one
// that the decomposition inserted after it.
struct DecomposedChar {
  char32_t cp;
  bool first_of_decomposition;
};

// NFD's canonical ordering: within each run of marks (combining class > 0), a stable sort by
// combining class. Each mark carries its first_of_decomposition flag along.
void ReorderMarks(std::vector<DecomposedChar>* text) {
  const auto is_mark = [](const DecomposedChar& c) { return CombiningClass(c.cp) != 0; };
  for (auto run = text->begin(); run != text->end();) {
    run = std::find_if(run, text->end(), is_mark);
    const auto run_end = std::find_if_not(run, text->end(), is_mark);
    // A stable sort, not an insertion sort: a text may hold long runs of marks.
    std::stable_sort(run, run_end, [](const DecomposedChar& a, const DecomposedChar& b) {
      return CombiningClass(a.cp) < CombiningClass(b.cp);
    });
    run = run_end;
  }
}

// Step 3: NFD, then nonspacing marks dropped. The sources follow tokenizers' alignment of a
// transformation, which goes by position after the reordering, not by character: each
// first_of_decomposition character, in output order, takes the span of the next input
// character, and an inserted one the span of the input character taken last. So "e\u0301"
// from "é" both get é's span, and the marks U+1D165 U+1D16D U+1D166 (classes 216 226 216),
// reordered to U+1D165 U+1D166 U+1D16D, keep the spans of the first, second and third input
// character in that order.
SourcedText StripAccents(const SourcedText& in) {
  std::vector<DecomposedChar> decomposed;
  decomposed.reserve(in.size());
  std::u32string parts;
  for (const SourcedChar& c : in) {
    parts.clear();
    AppendDecomposition(c.cp, &parts);
    for (size_t i = 0; i < parts.size(); ++i) decomposed.push_back({parts[i], i == 0});
  }
  ReorderMarks(&decomposed);
  SourcedText out;
  out.reserve(decomposed.size());
  size_t next_input = 0;
  for (const DecomposedChar& d : decomposed) {
    // Canonical decompositions are in canonical order, so an inserted character never moves
    // ahead of its first one: next_input > 0 here unless the input was empty of firsts.
    const TokenSpan source = d.first_of_decomposition || next_input == 0
                                 ? in[std::min(next_input++, in.size() - 1)].source
                                 : in[next_input - 1].source;
    if (!IsStrippedMark(d.cp)) out.push_back({d.cp, source});
  }
  return out;
}

// Step 4.
SourcedText Lowercase(const SourcedText& in) {
  SourcedText out;
  out.reserve(in.size());
  std::u32string lowered;
  for (const SourcedChar& c : in) {
    lowered.clear();
    AppendLowercase(c.cp, &lowered);
    for (char32_t part : lowered) out.push_back({part, c.source});
  }
  return out;
}

void AppendChar(const SourcedChar& c, PreToken* token) {
  utf8proc_uint8_t utf8[4];
  const utf8proc_ssize_t n = utf8proc_encode_char(static_cast<utf8proc_int32_t>(c.cp), utf8);
  token->text.append(reinterpret_cast<const char*>(utf8), static_cast<size_t>(n));
  token->byte_sources.insert(token->byte_sources.end(), static_cast<size_t>(n), c.source);
}

// Whitespace ends a word and is dropped; punctuation is a word of its own.
std::vector<PreToken> SplitWords(const SourcedText& text) {
  std::vector<PreToken> words;
  PreToken current;
  auto flush = [&] {
    if (!current.text.empty()) words.push_back(std::move(current));
    current = PreToken();
  };
  for (const SourcedChar& c : text) {
    if (IsBertWhitespace(c.cp)) {
      flush();
    } else if (IsBertPunctuation(c.cp)) {
      flush();
      AppendChar(c, &current);
      flush();
    } else {
      AppendChar(c, &current);
    }
  }
  flush();
  return words;
}

}  // namespace

std::vector<PreToken> PreTokenize(absl::string_view input, int64_t base,
                                  const NormalizerOptions& options) {
  SourcedText text = CleanAndSpaceChinese(Decode(input, base), options.handle_chinese_chars);
  if (options.strip_accents) text = StripAccents(text);
  if (options.lowercase) text = Lowercase(text);
  return SplitWords(text);
}

}  // namespace xlmr::models::bert
