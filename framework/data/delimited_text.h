// Internal to //framework/data:record_reader: splitting .tsv and .csv content into a header
// and rows of fields. The rules of each format are documented in record_reader.h.
#ifndef XLMR_FRAMEWORK_DATA_DELIMITED_TEXT_H_
#define XLMR_FRAMEWORK_DATA_DELIMITED_TEXT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlmr::data::internal {

struct TextRow {
  int64_t line = 0;  // 1-based physical line where the row starts
  std::vector<std::string> fields;
};

struct TextTable {
  std::vector<std::string> header;  // the column names, in file order, all distinct
  int64_t header_line = 0;
  std::vector<TextRow> rows;  // every row has header.size() fields
};

// [in] content: the file's bytes without a byte order mark; must hold a non-blank line.
// [in] file: the name used in error messages.
// Errors: a row with the wrong number of fields, a repeated column name, no data rows; for
// CSV also an unclosed quote or text after a closing quote.
absl::StatusOr<TextTable> ParseTsv(absl::string_view content, const std::string& file);
absl::StatusOr<TextTable> ParseCsv(absl::string_view content, const std::string& file);

}  // namespace xlmr::data::internal

#endif  // XLMR_FRAMEWORK_DATA_DELIMITED_TEXT_H_
