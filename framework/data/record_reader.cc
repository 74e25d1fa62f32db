#include "framework/data/record_reader.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "framework/core/status_macros.h"
#include "framework/data/data_file.h"
#include "framework/io/whole_file.h"
#include "framework/data/delimited_text.h"
#include "nlohmann/json.hpp"

namespace xlmr::data {
namespace {

using internal::TextTable;
using Json = nlohmann::json;

using internal::JsonErrorDetail;
using internal::LineError;

// Where one of the wanted columns sits in a header.
struct ColumnIndices {
  size_t text = 0;
  std::optional<size_t> text_pair;
  std::optional<size_t> label;  // absent only when labels are not required
};

std::optional<size_t> FindColumn(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  return std::nullopt;
}

absl::Status MissingColumnError(const std::string& file, absl::string_view kind,
                                const std::string& name, const std::vector<std::string>& present,
                                absl::string_view flag) {
  return absl::InvalidArgumentError(absl::StrCat(file, ": no ", kind, " '", name, "' (", kind,
                                                 "s: ", absl::StrJoin(present, ", "), "); set ",
                                                 flag));
}

absl::StatusOr<ColumnIndices> ResolveColumns(const TextTable& table, const std::string& file,
                                             const ColumnSpec& columns, bool require_label) {
  ColumnIndices indices;
  std::optional<size_t> text = FindColumn(table.header, columns.text_column);
  if (!text) {
    return MissingColumnError(file, "column", columns.text_column, table.header, columns.text_flag);
  }
  indices.text = *text;
  if (columns.text_pair_column) {
    indices.text_pair = FindColumn(table.header, *columns.text_pair_column);
    if (!indices.text_pair) {
      return MissingColumnError(file, "column", *columns.text_pair_column, table.header,
                                "--text_pair_column");
    }
  }
  indices.label = FindColumn(table.header, columns.label_column);
  if (!indices.label && require_label) {
    return MissingColumnError(file, "column", columns.label_column, table.header, "--label_column");
  }
  return indices;
}

absl::Status EmptyValueError(const std::string& file, int64_t line, absl::string_view what,
                             absl::string_view kind, const std::string& name,
                             absl::string_view flag) {
  return LineError(file, line, absl::StrCat(what, " in ", kind, " '", name, "' (", flag, ")"));
}

absl::StatusOr<std::vector<Record>> RecordsFromTable(TextTable table, const std::string& file,
                                                     const ColumnSpec& columns,
                                                     bool require_label) {
  XLMR_ASSIGN_OR_RETURN(const ColumnIndices indices,
                        ResolveColumns(table, file, columns, require_label));
  std::vector<Record> records;
  records.reserve(table.rows.size());
  for (internal::TextRow& row : table.rows) {
    Record record;
    record.line = row.line;
    record.text = std::move(row.fields[indices.text]);
    if (record.text.empty()) {
      return EmptyValueError(file, row.line, "empty text", "column", columns.text_column,
                             columns.text_flag);
    }
    if (indices.text_pair) {
      record.text_pair = std::move(row.fields[*indices.text_pair]);
      if (record.text_pair->empty()) {
        return EmptyValueError(file, row.line, "empty text", "column", *columns.text_pair_column,
                               "--text_pair_column");
      }
    }
    if (indices.label) record.label = std::move(row.fields[*indices.label]);
    if (record.label.empty() && require_label) {
      return EmptyValueError(file, row.line, "missing label", "column", columns.label_column,
                             "--label_column");
    }
    records.push_back(std::move(record));
  }
  return records;
}

std::vector<std::string> FieldNames(const Json& object) {
  std::vector<std::string> names;
  for (const auto& item : object.items()) names.push_back(item.key());
  return names;
}

// A text field of one JSON line: present, a string, non-empty.
absl::StatusOr<std::string> JsonText(const Json& object, const std::string& name,
                                     absl::string_view flag, const std::string& file,
                                     int64_t line) {
  const auto it = object.find(name);
  if (it == object.end()) {
    return LineError(file, line,
                     absl::StrCat("no field '", name, "' (fields: ",
                                  absl::StrJoin(FieldNames(object), ", "), "); set ", flag));
  }
  if (!it->is_string()) {
    return LineError(
        file, line,
        absl::StrCat("field '", name, "' (", flag, ") must be a string, found ", it->type_name()));
  }
  std::string text = it->get<std::string>();
  if (text.empty()) return EmptyValueError(file, line, "empty text", "field", name, flag);
  return text;
}

// The label of one JSON line: a string or a number; "" when absent/null and not required.
// A number keeps its JSON text as nlohmann-json writes it (integers in decimal; other numbers
// in the shortest form that reads back as the same double, e.g. 0.5, 3.8), which the regression
// and scored-pair readers parse (TokenizedDataset::AssignRegressionTargets).
absl::StatusOr<std::string> JsonLabel(const Json& object, const std::string& name,
                                      bool require_label, const std::string& file, int64_t line) {
  const auto it = object.find(name);
  std::string label;
  if (it != object.end() && it->is_string()) {
    label = it->get<std::string>();
  } else if (it != object.end() && it->is_number_unsigned()) {
    label = std::to_string(it->get<uint64_t>());
  } else if (it != object.end() && it->is_number_integer()) {
    label = std::to_string(it->get<int64_t>());
  } else if (it != object.end() && it->is_number_float()) {
    label = it->dump();
  } else if (it != object.end() && !it->is_null()) {
    return LineError(file, line,
                     absl::StrCat("field '", name, "' (--label_column) must be a string or a number, found ",
                                  it->type_name(), " ", it->dump()));
  } else if (it == object.end() && require_label) {
    return LineError(
        file, line,
        absl::StrCat("no field '", name, "' (fields: ", absl::StrJoin(FieldNames(object), ", "),
                     "); set --label_column"));
  }
  if (label.empty() && require_label) {
    return EmptyValueError(file, line, "missing label", "field", name, "--label_column");
  }
  return label;
}

absl::StatusOr<Record> RecordFromJsonLine(absl::string_view text, int64_t line,
                                          const std::string& file, const ColumnSpec& columns,
                                          bool require_label) {
  Json object;
  try {
    object = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& error) {  // parse_error, or out_of_range for a number like 1e9999
    return LineError(file, line,
                     absl::StrCat("invalid JSON (", JsonErrorDetail(error.what()), ")"));
  }
  if (!object.is_object()) {
    return LineError(file, line,
                     absl::StrCat("expected a JSON object, found ", object.type_name()));
  }
  Record record;
  record.line = line;
  XLMR_ASSIGN_OR_RETURN(record.text,
                        JsonText(object, columns.text_column, columns.text_flag, file, line));
  if (columns.text_pair_column) {
    XLMR_ASSIGN_OR_RETURN(record.text_pair, JsonText(object, *columns.text_pair_column,
                                                     "--text_pair_column", file, line));
  }
  XLMR_ASSIGN_OR_RETURN(record.label,
                        JsonLabel(object, columns.label_column, require_label, file, line));
  return record;
}

absl::StatusOr<std::vector<Record>> ReadJsonLines(absl::string_view content,
                                                  const std::string& file,
                                                  const ColumnSpec& columns, bool require_label) {
  std::vector<Record> records;
  int64_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(content, '\n')) {
    ++line_number;
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    XLMR_ASSIGN_OR_RETURN(Record record,
                          RecordFromJsonLine(line, line_number, file, columns, require_label));
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace

absl::StatusOr<std::string> DataFormatOf(const std::string& path) {
  const std::string extension = internal::LowerExtension(path);
  if (extension == ".tsv" || extension == ".csv" || extension == ".jsonl") return extension;
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": unknown data format; expected .tsv, .csv or .jsonl"));
}

absl::StatusOr<std::vector<Record>> ReadRecords(const std::string& path, const ColumnSpec& columns,
                                                bool require_label) {
  XLMR_ASSIGN_OR_RETURN(const std::string format, DataFormatOf(path));
  XLMR_ASSIGN_OR_RETURN(const std::string content, io::ReadWholeFile(path));
  const absl::string_view text = internal::SkipByteOrderMark(content);
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": file is empty"));
  }
  if (format == ".jsonl") return ReadJsonLines(text, path, columns, require_label);
  XLMR_ASSIGN_OR_RETURN(TextTable table, format == ".tsv" ? internal::ParseTsv(text, path)
                                                          : internal::ParseCsv(text, path));
  return RecordsFromTable(std::move(table), path, columns, require_label);
}

}  // namespace xlmr::data
