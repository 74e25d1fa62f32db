#include "framework/data/delimited_text.h"

#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "framework/core/status_macros.h"
#include "framework/data/data_file.h"

namespace xlmr::data::internal {
namespace {

absl::string_view StripCarriageReturn(absl::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// The first row becomes the header; checks names are distinct, counts match and rows exist.
absl::StatusOr<TextTable> MakeTable(std::vector<TextRow> rows, const std::string& file,
                                    absl::string_view separator_name) {
  if (rows.empty()) return absl::InvalidArgumentError(absl::StrCat(file, ": file is empty"));
  TextTable table;
  table.header = std::move(rows.front().fields);
  table.header_line = rows.front().line;
  absl::flat_hash_set<std::string> seen;
  for (const std::string& name : table.header) {
    if (!seen.insert(name).second) {
      return LineError(file, table.header_line,
                       absl::StrCat("column '", name, "' appears more than once in the header"));
    }
  }
  for (size_t i = 1; i < rows.size(); ++i) {
    if (rows[i].fields.size() != table.header.size()) {
      return LineError(file, rows[i].line,
                       absl::StrCat("expected ", table.header.size(), " ", separator_name,
                                    " fields, found ", rows[i].fields.size()));
    }
    table.rows.push_back(std::move(rows[i]));
  }
  if (table.rows.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": no data rows after the header (line ", table.header_line, ")"));
  }
  return table;
}

// Reads CSV records one at a time, tracking the physical line number.
class CsvScanner {
 public:
  CsvScanner(absl::string_view content, const std::string& file) : text_(content), file_(file) {}

  // The next non-blank record, or nullopt at the end of the content.
  absl::StatusOr<std::optional<TextRow>> Next() {
    SkipBlankLines();
    if (AtEnd()) return std::optional<TextRow>();
    TextRow row;
    row.line = line_;
    bool more_fields = true;
    while (more_fields) {
      std::string field;
      if (Peek() == '"') {
        XLMR_RETURN_IF_ERROR(ReadQuoted(&field));
      } else {
        ReadUnquoted(&field);
      }
      row.fields.push_back(std::move(field));
      XLMR_ASSIGN_OR_RETURN(more_fields, ConsumeFieldEnd());
    }
    return std::optional<TextRow>(std::move(row));
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool AtLineEnd() const { return Peek() == '\n' || (Peek() == '\r' && Peek(1) == '\n'); }
  void ConsumeLineEnd() {
    pos_ += Peek() == '\r' ? 2 : 1;
    ++line_;
  }

  void SkipBlankLines() {
    while (!AtEnd() && AtLineEnd()) ConsumeLineEnd();
  }

  // After a field: true when a comma follows (another field), false at the end of the record.
  absl::StatusOr<bool> ConsumeFieldEnd() {
    if (AtEnd()) return false;
    if (Peek() == ',') {
      ++pos_;
      return true;
    }
    if (AtLineEnd()) {
      ConsumeLineEnd();
      return false;
    }
    return LineError(file_, line_,
                     "unexpected text after a closing quote (inside a quoted field, write a "
                     "quote as \"\")");
  }

  // An unquoted field runs to the next comma or line end; quotes inside it are text.
  void ReadUnquoted(std::string* field) {
    const size_t begin = pos_;
    while (!AtEnd() && Peek() != ',' && !AtLineEnd()) ++pos_;
    *field = std::string(text_.substr(begin, pos_ - begin));
    // A lone '\r' just before the end of the content belongs to the line end.
    if (AtEnd() && !field->empty() && field->back() == '\r') field->pop_back();
  }

  // A quoted field: '""' is one quote; commas and line breaks are text.
  absl::Status ReadQuoted(std::string* field) {
    const int64_t start_line = line_;
    ++pos_;  // the opening quote
    while (true) {
      if (AtEnd()) {
        return LineError(file_, start_line,
                         "a quoted field starts on this line and is never closed");
      }
      const char c = text_[pos_++];
      if (c == '"') {
        if (Peek() != '"') return absl::OkStatus();
        ++pos_;
      } else if (c == '\n') {
        ++line_;
      }
      field->push_back(c);
    }
  }

  absl::string_view text_;
  const std::string& file_;
  size_t pos_ = 0;
  int64_t line_ = 1;
};

}  // namespace

absl::StatusOr<TextTable> ParseTsv(absl::string_view content, const std::string& file) {
  std::vector<TextRow> rows;
  int64_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(content, '\n')) {
    ++line_number;
    line = StripCarriageReturn(line);
    if (line.empty()) continue;
    TextRow row;
    row.line = line_number;
    row.fields = absl::StrSplit(line, '\t');
    rows.push_back(std::move(row));
  }
  return MakeTable(std::move(rows), file, "tab-separated");
}

absl::StatusOr<TextTable> ParseCsv(absl::string_view content, const std::string& file) {
  CsvScanner scanner(content, file);
  std::vector<TextRow> rows;
  while (true) {
    XLMR_ASSIGN_OR_RETURN(std::optional<TextRow> row, scanner.Next());
    if (!row.has_value()) break;
    rows.push_back(std::move(*row));
  }
  return MakeTable(std::move(rows), file, "comma-separated");
}

}  // namespace xlmr::data::internal
