#include "framework/data/tagged_sentence_reader.h"

#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "framework/core/status_macros.h"
#include "framework/data/data_file.h"
#include "framework/io/whole_file.h"
#include "nlohmann/json.hpp"

namespace xlmr::data {
namespace {

using internal::LineError;
using Json = nlohmann::json;

constexpr absl::string_view kDocStart = "-DOCSTART-";

// Unicode's White_Space property (what Hugging Face's WhitespaceSplit, Rust's
// char::is_whitespace, splits on).
bool IsWhiteSpaceCodePoint(uint32_t c) {
  return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// True when `text` is empty or every character is White_Space. Invalid UTF-8 is not
// whitespace (the tokenizer spells it as unknown pieces, so the word keeps a token).
bool IsBlankWord(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    int length = 0;
    uint32_t code = 0;
    if (byte < 0x80) {
      length = 1;
      code = byte;
    } else if ((byte & 0xE0) == 0xC0) {
      length = 2;
      code = byte & 0x1F;
    } else if ((byte & 0xF0) == 0xE0) {
      length = 3;
      code = byte & 0x0F;
    } else {
      return false;  // 4-byte sequences hold no White_Space; anything else is invalid
    }
    if (i + length > text.size()) return false;
    for (int k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return false;
      code = (code << 6) | (next & 0x3F);
    }
    if (!IsWhiteSpaceCodePoint(code)) return false;
    i += length;
  }
  return true;
}

absl::string_view StripCarriageReturn(absl::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// ---------------------------------------------------------------------------- CoNLL

struct WordLine {
  int64_t line = 0;
  std::string word;
  std::optional<std::string> tag;  // the last field, when the line has two or more
  bool sentence_start = false;     // first word after a separator (or of the file)
};

absl::StatusOr<std::vector<TaggedSentence>> ReadConll(absl::string_view content,
                                                      const std::string& file,
                                                      bool require_tags) {
  std::vector<WordLine> words;
  bool every_line_tagged = true;
  bool at_separator = true;
  int64_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(content, '\n')) {
    ++line_number;
    line = StripCarriageReturn(line);
    const std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (absl::StripAsciiWhitespace(line).empty() || fields.empty() || fields[0] == kDocStart) {
      at_separator = true;
      continue;
    }
    if (IsBlankWord(fields[0])) {
      // Only other whitespace (e.g. a no-break space) around the separators: no word at all.
      return LineError(file, line_number,
                       "the word is whitespace only; expected a word (the tokenizer would give "
                       "it no token)");
    }
    if (fields.size() < 2) {
      every_line_tagged = false;
      if (require_tags) {
        return LineError(file, line_number,
                         "expected a word and its tag separated by tabs or spaces, found 1 "
                         "field");
      }
    }
    WordLine word;
    word.line = line_number;
    word.word = std::string(fields.front());
    if (fields.size() >= 2) word.tag = std::string(fields.back());
    word.sentence_start = at_separator;
    at_separator = false;
    words.push_back(std::move(word));
  }
  if (words.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": no sentences (only blank and -DOCSTART- lines)"));
  }
  const bool with_tags = every_line_tagged;  // always true under require_tags
  std::vector<TaggedSentence> sentences;
  for (WordLine& word : words) {
    if (word.sentence_start) {
      sentences.emplace_back();
      sentences.back().line = word.line;
    }
    TaggedSentence& sentence = sentences.back();
    sentence.words.push_back(std::move(word.word));
    if (with_tags) sentence.tags.push_back(std::move(*word.tag));
  }
  return sentences;
}

// ---------------------------------------------------------------------------- JSON lines

std::string FieldList(const Json& object) {
  std::vector<std::string> names;
  for (const auto& item : object.items()) names.push_back(item.key());
  return absl::StrJoin(names, ", ");
}

// A JSON value for a message; never throws (invalid UTF-8 is replaced).
std::string Dump(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// An array of strings from field `name` of `object` (present, checked by the caller).
// `item` names one element ("word", "tag").
absl::StatusOr<std::vector<std::string>> StringArray(const Json& value, const std::string& name,
                                                     absl::string_view flag,
                                                     absl::string_view item,
                                                     const std::string& file, int64_t line) {
  if (!value.is_array()) {
    return LineError(file, line,
                     absl::StrCat("field '", name, "' (", flag, ") must be an array of ", item,
                                  "s (strings), found ", value.type_name()));
  }
  std::vector<std::string> strings;
  strings.reserve(value.size());
  for (size_t i = 0; i < value.size(); ++i) {
    const Json& element = value[i];
    if (element.is_number_integer() && item == "tag") {
      return LineError(file, line,
                       absl::StrCat(name, "[", i, "] (", flag, ") is the integer ", Dump(element),
                                    "; expected string tags such as \"B-PER\" (class ids have "
                                    "no names in the file)"));
    }
    if (!element.is_string()) {
      return LineError(file, line,
                       absl::StrCat(name, "[", i, "] (", flag, ") must be a string, found ",
                                    element.type_name(), " ", Dump(element)));
    }
    strings.push_back(element.get<std::string>());
  }
  return strings;
}

absl::StatusOr<TaggedSentence> SentenceFromJsonLine(absl::string_view text, int64_t line,
                                                    const std::string& file,
                                                    const WordTagColumns& columns,
                                                    bool require_tags) {
  Json object;
  try {
    object = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& error) {  // parse_error, or out_of_range for a number like 1e9999
    return LineError(
        file, line, absl::StrCat("invalid JSON (", internal::JsonErrorDetail(error.what()), ")"));
  }
  if (!object.is_object()) {
    return LineError(file, line,
                     absl::StrCat("expected a JSON object, found ", object.type_name()));
  }
  TaggedSentence sentence;
  sentence.line = line;
  const std::string& words_name = columns.tokens_column;
  const auto words = object.find(words_name);
  if (words == object.end()) {
    return LineError(file, line,
                     absl::StrCat("no field '", words_name, "' (fields: ", FieldList(object),
                                  "); set --tokens_column"));
  }
  XLMR_ASSIGN_OR_RETURN(sentence.words,
                        StringArray(*words, words_name, "--tokens_column", "word", file, line));
  if (sentence.words.empty()) {
    return LineError(file, line,
                     absl::StrCat("field '", words_name,
                                  "' (--tokens_column) has no words; expected a sentence"));
  }
  for (size_t i = 0; i < sentence.words.size(); ++i) {
    if (IsBlankWord(sentence.words[i])) {
      return LineError(file, line,
                       absl::StrCat(words_name, "[", i, "] (--tokens_column) is ",
                                    sentence.words[i].empty() ? "empty" : "whitespace only",
                                    "; expected a word (the tokenizer would give it no token)"));
    }
  }
  const std::string& tags_name = columns.tags_column;
  const auto tags = object.find(tags_name);
  if (tags == object.end() || tags->is_null()) {
    if (!require_tags) return sentence;
    if (tags != object.end()) {
      return LineError(file, line,
                       absl::StrCat("field '", tags_name,
                                    "' (--tags_column) is null; expected an array of tags"));
    }
    return LineError(file, line,
                     absl::StrCat("no field '", tags_name, "' (fields: ", FieldList(object),
                                  "); set --tags_column"));
  }
  XLMR_ASSIGN_OR_RETURN(sentence.tags,
                        StringArray(*tags, tags_name, "--tags_column", "tag", file, line));
  if (sentence.tags.size() != sentence.words.size()) {
    return LineError(file, line,
                     absl::StrCat("field '", words_name, "' (--tokens_column) has ",
                                  sentence.words.size(), " words but field '", tags_name,
                                  "' (--tags_column) has ", sentence.tags.size(), " tags"));
  }
  for (size_t i = 0; i < sentence.tags.size(); ++i) {
    if (sentence.tags[i].empty()) {
      return LineError(file, line,
                       absl::StrCat(tags_name, "[", i, "] (--tags_column) is empty; expected a "
                                    "tag such as \"O\""));
    }
  }
  return sentence;
}

absl::StatusOr<std::vector<TaggedSentence>> ReadJsonLines(absl::string_view content,
                                                          const std::string& file,
                                                          const WordTagColumns& columns,
                                                          bool require_tags) {
  std::vector<TaggedSentence> sentences;
  int64_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(content, '\n')) {
    ++line_number;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    XLMR_ASSIGN_OR_RETURN(
        TaggedSentence sentence,
        SentenceFromJsonLine(line, line_number, file, columns, require_tags));
    sentences.push_back(std::move(sentence));
  }
  return sentences;
}

}  // namespace

absl::StatusOr<std::string> TaggedDataFormatOf(const std::string& path) {
  const std::string extension = internal::LowerExtension(path);
  if (extension == ".conll" || extension == ".txt" || extension == ".jsonl") return extension;
  return absl::InvalidArgumentError(absl::StrCat(
      path, ": unknown format for tagged sentences; expected .conll, .txt or .jsonl"));
}

absl::StatusOr<std::vector<TaggedSentence>> ReadTaggedSentences(const std::string& path,
                                                                const WordTagColumns& columns,
                                                                bool require_tags) {
  XLMR_ASSIGN_OR_RETURN(const std::string format, TaggedDataFormatOf(path));
  XLMR_ASSIGN_OR_RETURN(const std::string content, io::ReadWholeFile(path));
  const absl::string_view text = internal::SkipByteOrderMark(content);
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": file is empty"));
  }
  if (format == ".jsonl") return ReadJsonLines(text, path, columns, require_tags);
  return ReadConll(text, path, require_tags);
}

}  // namespace xlmr::data
