// Reading labelled text examples from a user's data file (--train_file, --eval_file,
// --test_file, xlmr_predict's --input_file).
//
// The format is chosen by the extension (case-insensitive):
//   .tsv    First line: the column names. Every other line is one row; fields are separated by
//           tabs and taken literally: no quoting and no escapes, so a quote character is text
//           (pandas' read_csv(sep="\t", quoting=csv.QUOTE_NONE), the GLUE files' convention).
//           A field can therefore hold neither a tab nor a newline. Every row must have
//           exactly as many fields as the header.
//   .csv    RFC 4180: a header row, then rows of comma-separated fields. A field may be quoted
//           with '"'; inside quotes, '""' is one quote and commas and line breaks are text.
//           A quote inside an unquoted field is text (as Python's csv module reads it); text
//           after a closing quote other than a comma or line end is an error. Every row must
//           have exactly as many fields as the header.
//   .jsonl  One JSON object per line (nlohmann-json); text fields must be JSON strings; the
//           label may be a string or a number (read as its JSON text: 3 -> "3", 0.25 -> "0.25";
//           a regression target or a pair's score, as datasets' float columns hold them).
//           Other fields are ignored.
// All formats: a UTF-8 byte order mark at the start is skipped; lines may end in "\n" or
// "\r\n"; empty lines (whitespace-only lines in .jsonl) are skipped. Line numbers in records
// and messages are 1-based physical lines of the file (the header is line 1 of a .tsv/.csv;
// a .csv row that spans lines reports the line it starts on).
//
// Errors are one line naming the file (as given), the line when there is one, and what is
// wrong; a message about a column names the flag that chooses it, e.g.
//   dev.tsv:17: expected 2 tab-separated fields, found 3
//   train.csv: no column 'sentence' (columns: text, label); set --text_column
//   train.jsonl:4: invalid JSON (syntax error ...)
#ifndef XLMR_FRAMEWORK_DATA_RECORD_READER_H_
#define XLMR_FRAMEWORK_DATA_RECORD_READER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace xlmr::data {

// Which columns (or JSON fields) hold the example; defaults are the flags' defaults.
struct ColumnSpec {
  std::string text_column = "text";             // --text_column
  std::optional<std::string> text_pair_column;  // --text_pair_column; none: single texts
  std::string label_column = "label";           // --label_column
  // The flag that names the text column, as errors name it (not part of any cache key).
  std::string text_flag = "--text_column";
};

struct Record {
  std::string text;                      // never empty
  std::optional<std::string> text_pair;  // set (and never empty) iff a pair column is given
  std::string label;                     // "" only when the file has no label for this row
  int64_t line = 0;                      // 1-based line of the file where the row starts
};

// Reads every row of `path` in file order.
// [in] columns: the columns to read; text (and pair, when given) must exist and be non-empty
//      in every row.
// [in] require_label: true for training/evaluation data: the label column must exist and
//      every label must be non-empty. False for prediction input: a missing label column, a
//      missing JSON field, null or an empty value give label "".
// Errors: file not found or unreadable, empty file, no data rows, unknown extension, missing
// column, wrong field count, malformed quoting or JSON, empty text, missing label.
absl::StatusOr<std::vector<Record>> ReadRecords(const std::string& path, const ColumnSpec& columns,
                                                bool require_label);

// The lower-cased extension that selects the format (".tsv", ".csv" or ".jsonl"), or an
// error naming the file and the accepted extensions.
absl::StatusOr<std::string> DataFormatOf(const std::string& path);

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_RECORD_READER_H_
