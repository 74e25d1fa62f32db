// ReadRecords for .tsv and .jsonl, and the errors shared by every format (CSV quoting has its
// own file, delimited_text_test.cc). Messages are compared exactly: they are the user interface.
#include "framework/data/record_reader.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/framework/data/temp_files.h"

namespace xlmr::data {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::WriteTempFile;

ColumnSpec Columns(std::string text = "text", std::string label = "label") {
  ColumnSpec columns;
  columns.text_column = std::move(text);
  columns.label_column = std::move(label);
  return columns;
}

// The error message of reading `path`; fails the test when reading succeeds.
std::string ErrorOf(const std::string& path, const ColumnSpec& columns = Columns(),
                    bool require_label = true) {
  absl::StatusOr<std::vector<Record>> records = ReadRecords(path, columns, require_label);
  EXPECT_FALSE(records.ok()) << "read " << path << " without error";
  return records.ok() ? "" : std::string(records.status().message());
}

TEST(TsvReaderTest, ReadsRowsWithLineNumbersAndTakesQuotesLiterally) {
  const std::string path = WriteTempFile(
      "basic.tsv", "id\ttext\tlabel\n1\t\"quoted\" words\tpos\n\n2\tit's, fine\tneg\n");
  absl::StatusOr<std::vector<Record>> records = ReadRecords(path, Columns(), true);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].text, "\"quoted\" words");
  EXPECT_EQ((*records)[0].label, "pos");
  EXPECT_EQ((*records)[0].line, 2);
  EXPECT_FALSE((*records)[0].text_pair.has_value());
  EXPECT_EQ((*records)[1].text, "it's, fine");
  EXPECT_EQ((*records)[1].line, 4);  // the blank line 3 is skipped but counted
}

TEST(TsvReaderTest, ReadsTextPairs) {
  const std::string path =
      WriteTempFile("pairs.tsv", "premise\thypothesis\tlabel\nA cat.\tAn animal.\tentailment\n");
  ColumnSpec columns = Columns("premise");
  columns.text_pair_column = "hypothesis";
  absl::StatusOr<std::vector<Record>> records = ReadRecords(path, columns, true);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].text, "A cat.");
  EXPECT_EQ((*records)[0].text_pair, "An animal.");
  EXPECT_EQ((*records)[0].label, "entailment");
}

TEST(TsvReaderTest, HandlesByteOrderMarkAndCrLf) {
  const std::string path =
      WriteTempFile("bom.tsv", "\xEF\xBB\xBFtext\tlabel\r\nhello\tpos\r\nbye\tneg\r\n");
  absl::StatusOr<std::vector<Record>> records = ReadRecords(path, Columns(), true);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].text, "hello");
  EXPECT_EQ((*records)[0].label, "pos");  // no '\r' left on the last field
  EXPECT_EQ((*records)[1].label, "neg");
}

TEST(TsvReaderTest, ExtensionIsCaseInsensitive) {
  const std::string path = WriteTempFile("upper.TSV", "text\tlabel\na\tb\n");
  EXPECT_TRUE(ReadRecords(path, Columns(), true).ok());
}

TEST(TsvReaderTest, WrongFieldCountNamesFileLineAndCounts) {
  const std::string path = WriteTempFile("dev.tsv", "text\tlabel\nok\tpos\na\tb\tc\n");
  EXPECT_EQ(ErrorOf(path), path + ":3: expected 2 tab-separated fields, found 3");
  const std::string fewer = WriteTempFile("fewer.tsv", "text\tlabel\nno label here\n");
  EXPECT_EQ(ErrorOf(fewer), fewer + ":2: expected 2 tab-separated fields, found 1");
}

TEST(TsvReaderTest, MissingColumnsNameTheirFlag) {
  const std::string path = WriteTempFile("columns.tsv", "text\tlabel\nhello\tpos\n");
  EXPECT_EQ(ErrorOf(path, Columns("sentence")),
            path + ": no column 'sentence' (columns: text, label); set --text_column");
  EXPECT_EQ(ErrorOf(path, Columns("text", "class")),
            path + ": no column 'class' (columns: text, label); set --label_column");
  ColumnSpec pair = Columns();
  pair.text_pair_column = "hypothesis";
  EXPECT_EQ(ErrorOf(path, pair),
            path + ": no column 'hypothesis' (columns: text, label); set --text_pair_column");
}

TEST(TsvReaderTest, LabelColumnIsOptionalWhenNotRequired) {
  const std::string path = WriteTempFile("unlabelled.tsv", "text\nhello\n");
  absl::StatusOr<std::vector<Record>> records = ReadRecords(path, Columns(), false);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].label, "");
}

TEST(TsvReaderTest, EmptyTextAndMissingLabelAreErrors) {
  const std::string empty_text = WriteTempFile("empty_text.tsv", "text\tlabel\na\tpos\n\tneg\n");
  EXPECT_EQ(ErrorOf(empty_text), empty_text + ":3: empty text in column 'text' (--text_column)");

  const std::string empty_pair = WriteTempFile("empty_pair.tsv", "a\tb\tlabel\nx\t\tpos\n");
  ColumnSpec pair = Columns("a");
  pair.text_pair_column = "b";
  EXPECT_EQ(ErrorOf(empty_pair, pair),
            empty_pair + ":2: empty text in column 'b' (--text_pair_column)");

  const std::string no_label = WriteTempFile("no_label.tsv", "text\tlabel\na\tpos\nb\t\n");
  EXPECT_EQ(ErrorOf(no_label), no_label + ":3: missing label in column 'label' (--label_column)");
  absl::StatusOr<std::vector<Record>> unlabelled = ReadRecords(no_label, Columns(), false);
  ASSERT_TRUE(unlabelled.ok()) << unlabelled.status();
  EXPECT_EQ((*unlabelled)[1].label, "");
}

TEST(TsvReaderTest, RepeatedColumnNameIsAnError) {
  const std::string path = WriteTempFile("repeated.tsv", "text\ttext\tlabel\na\tb\tc\n");
  EXPECT_EQ(ErrorOf(path), path + ":1: column 'text' appears more than once in the header");
}

TEST(ReaderErrorsTest, EmptyFilesAndHeaderOnly) {
  for (const char* content : {"", "\n\n", "\xEF\xBB\xBF", "\r\n  \n"}) {
    const std::string tsv = WriteTempFile("empty.tsv", content);
    EXPECT_EQ(ErrorOf(tsv), tsv + ": file is empty");
    const std::string jsonl = WriteTempFile("empty.jsonl", content);
    EXPECT_EQ(ErrorOf(jsonl), jsonl + ": file is empty");
  }
  const std::string header_only = WriteTempFile("header_only.tsv", "text\tlabel\n\n");
  EXPECT_EQ(ErrorOf(header_only), header_only + ": no data rows after the header (line 1)");
}

TEST(ReaderErrorsTest, UnknownExtensionAndMissingFile) {
  const std::string txt = WriteTempFile("data.txt", "text\tlabel\na\tb\n");
  EXPECT_EQ(ErrorOf(txt), txt + ": unknown data format; expected .tsv, .csv or .jsonl");
  EXPECT_EQ(ErrorOf("no_extension"),
            "no_extension: unknown data format; expected .tsv, .csv or .jsonl");

  const std::string missing = ::testing::TempDir() + "does_not_exist.tsv";
  absl::StatusOr<std::vector<Record>> records = ReadRecords(missing, Columns(), true);
  ASSERT_FALSE(records.ok());
  EXPECT_EQ(records.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(records.status().message(), missing + ": cannot open file (No such file or directory)");
}

TEST(JsonlReaderTest, ReadsStringAndIntegerLabelsAndSkipsBlankLines) {
  const std::string path =
      WriteTempFile("train.jsonl",
                    "\xEF\xBB\xBF{\"text\": \"caf\\u00e9\", \"label\": 3, \"idx\": 0}\r\n"
                    "   \n"
                    "{\"text\": \"b\", \"label\": -1}\n"
                    "{\"label\": \"neutral\", \"text\": \"c\"}\n");
  absl::StatusOr<std::vector<Record>> records = ReadRecords(path, Columns(), true);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  EXPECT_EQ((*records)[0].text, "caf\xC3\xA9");
  EXPECT_EQ((*records)[0].label, "3");
  EXPECT_EQ((*records)[1].label, "-1");
  EXPECT_EQ((*records)[1].line, 3);
  EXPECT_EQ((*records)[2].label, "neutral");
  EXPECT_EQ((*records)[2].line, 4);
}

// Float labels (regression targets, scored pairs' scores) keep a text that reads back as the
// same double: what datasets' float columns write.
TEST(JsonlReaderTest, ReadsFloatLabelsAsTheirShortestText) {
  const std::string path = WriteTempFile(
      "scores.jsonl", "{\"text\": \"a\", \"label\": 0.5}\n{\"text\": \"b\", \"label\": 3.8000000000000003}\n"
                      "{\"text\": \"c\", \"label\": 1e-7}\n");
  absl::StatusOr<std::vector<Record>> records = ReadRecords(path, Columns(), true);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 3u);
  EXPECT_EQ((*records)[0].label, "0.5");
  EXPECT_EQ(std::stod((*records)[1].label), 3.8000000000000003);
  EXPECT_EQ(std::stod((*records)[2].label), 1e-7);
}

TEST(JsonlReaderTest, ReadsPairsAndOptionalLabels) {
  const std::string path = WriteTempFile(
      "pairs.jsonl",
      "{\"a\": \"x\", \"b\": \"y\"}\n{\"a\": \"z\", \"b\": \"w\", \"label\": null}\n");
  ColumnSpec columns = Columns("a");
  columns.text_pair_column = "b";
  absl::StatusOr<std::vector<Record>> records = ReadRecords(path, columns, false);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].text_pair, "y");
  EXPECT_EQ((*records)[0].label, "");
  EXPECT_EQ((*records)[1].label, "");
  EXPECT_EQ(ErrorOf(path, columns, true),
            path + ":1: no field 'label' (fields: a, b); set --label_column");
}

TEST(JsonlReaderTest, ErrorsNameLineAndField) {
  const std::string bad_json =
      WriteTempFile("bad.jsonl", "{\"text\": \"a\", \"label\": 1}\n{\"text\": }\n");
  EXPECT_THAT(ErrorOf(bad_json),
              StartsWith(bad_json + ":2: invalid JSON (column 10: syntax error"));

  const std::string array = WriteTempFile("array.jsonl", "[1, 2]\n");
  EXPECT_EQ(ErrorOf(array), array + ":1: expected a JSON object, found array");

  const std::string missing =
      WriteTempFile("missing.jsonl", "{\"sentence\": \"a\", \"label\": 1}\n");
  EXPECT_EQ(ErrorOf(missing),
            missing + ":1: no field 'text' (fields: label, sentence); set --text_column");

  const std::string number_text =
      WriteTempFile("number_text.jsonl", "{\"text\": 5, \"label\": 1}\n");
  EXPECT_EQ(ErrorOf(number_text),
            number_text + ":1: field 'text' (--text_column) must be a string, found number");

  const std::string empty_text =
      WriteTempFile("empty_text.jsonl", "{\"text\": \"\", \"label\": 1}\n");
  EXPECT_EQ(ErrorOf(empty_text), empty_text + ":1: empty text in field 'text' (--text_column)");

  const std::string bool_label =
      WriteTempFile("bool.jsonl", "{\"text\": \"a\", \"label\": true}\n");
  EXPECT_EQ(ErrorOf(bool_label),
            bool_label + ":1: field 'label' (--label_column) must be a string or a number, found boolean true");

  const std::string null_label =
      WriteTempFile("null.jsonl", "{\"text\": \"a\", \"label\": null}\n");
  EXPECT_EQ(ErrorOf(null_label),
            null_label + ":1: missing label in field 'label' (--label_column)");
}

TEST(JsonlReaderTest, InvalidUtf8IsInvalidJson) {
  const std::string path = WriteTempFile("utf8.jsonl", "{\"text\": \"\xFF\", \"label\": 1}\n");
  EXPECT_THAT(ErrorOf(path), HasSubstr(":1: invalid JSON ("));
}

TEST(DataFormatTest, PicksTheFormatByExtension) {
  EXPECT_EQ(*DataFormatOf("a/b/train.TSV"), ".tsv");
  EXPECT_EQ(*DataFormatOf("x.csv"), ".csv");
  EXPECT_EQ(*DataFormatOf("x.jsonl"), ".jsonl");
  EXPECT_FALSE(DataFormatOf("dir.tsv/file").ok());  // the dot belongs to a directory
  EXPECT_FALSE(DataFormatOf("x.json").ok());
}

}  // namespace
}  // namespace xlmr::data
