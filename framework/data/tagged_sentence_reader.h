// Reading word-tagged sentences (token classification, e.g. NER) from a user's data file:
// --train_file, --eval_file, --test_file of a token-classification run, and xlmr_predict's
// --input_file (words only).
//
// The format is chosen by the extension (case-insensitive):
//   .conll, .txt  CoNLL: one word per line. Fields are separated by runs of tabs and spaces;
//           the word is the FIRST field and its tag the LAST one, so two-column files
//           ("EU B-ORG") and CoNLL-2003's four columns ("EU NNP B-NP B-ORG") both work, and
//           the middle columns are ignored. A word can therefore hold no tab or space.
//           Blank (whitespace-only) lines end a sentence; a line whose first field is
//           "-DOCSTART-" is skipped and also ends a sentence.
//           Tags: with require_tags every word line needs at least two fields. Without it
//           (prediction input), tags are read only when EVERY word line of the file has at
//           least two fields; otherwise no sentence gets tags and each line's first field is
//           its word (the other fields are ignored). One rule for the whole file, so a file
//           never yields some sentences with tags and some without.
//   .jsonl  One JSON object per line (nlohmann-json), as Hugging Face's run_ner reads JSON:
//           the field --tokens_column holds the words (a non-empty array of strings) and
//           --tags_column the tags (an array of strings of the same length). Tags must be
//           strings such as "B-PER": class ids (integers) are refused, since a file alone
//           cannot say which name each id stands for. Without require_tags a missing or null
//           tags field gives that sentence no tags. Other fields are ignored.
// Every word must be non-empty and not consist only of whitespace (Unicode White_Space): the
// tokenizer turns such a word into no tokens, and its tag would be lost. Tags must be
// non-empty.
// All formats: a UTF-8 byte order mark at the start is skipped; lines may end in "\n" or
// "\r\n"; whitespace-only lines in .jsonl are skipped. Line numbers are 1-based physical lines.
//
// Errors are one line naming the file (as given), the line when there is one, and what is
// expected; a message about a JSON field names the flag that chooses it, e.g.
//   train.conll:17: expected a word and its tag separated by tabs or spaces, found 1 field
//   dev.jsonl:4: field 'tokens' (--tokens_column) has 5 words but field 'ner_tags'
//     (--tags_column) has 4 tags
#ifndef XLMR_FRAMEWORK_DATA_TAGGED_SENTENCE_READER_H_
#define XLMR_FRAMEWORK_DATA_TAGGED_SENTENCE_READER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace xlmr::data {

struct TaggedSentence {
  std::vector<std::string> words;  // never empty; no word is empty or whitespace-only
  std::vector<std::string> tags;   // one per word, or empty when the file gives no tags
  int64_t line = 0;                // 1-based line where the sentence starts
};

// Which JSON fields hold the words and the tags (.jsonl only); defaults are the flags'
// defaults, Hugging Face run_ner's.
struct WordTagColumns {
  std::string tokens_column = "tokens";  // --tokens_column
  std::string tags_column = "ner_tags";  // --tags_column
};

// Reads every sentence of `path` in file order.
// [in] columns: the JSON fields of a .jsonl file (unused for CoNLL).
// [in] require_tags: true for training/evaluation data: every word must have a tag. False for
//      prediction input: see the per-format rules above.
// Errors: file not found or unreadable, empty file, no sentences, unknown extension, a word
// line without a tag, missing or mistyped JSON fields, integer tags, words and tags of
// different lengths, an empty sentence, an empty or whitespace-only word, an empty tag.
absl::StatusOr<std::vector<TaggedSentence>> ReadTaggedSentences(const std::string& path,
                                                                const WordTagColumns& columns,
                                                                bool require_tags);

// The lower-cased extension that selects the format (".conll", ".txt" or ".jsonl"), or an
// error naming the file and the accepted extensions.
absl::StatusOr<std::string> TaggedDataFormatOf(const std::string& path);

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_TAGGED_SENTENCE_READER_H_
