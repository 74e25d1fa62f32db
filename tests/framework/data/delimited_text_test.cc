// framework/data/delimited_text.cc, the RFC 4180 reading of .csv files, through ReadRecords
// (delimited_text.h is private to //framework/data:record_reader): quoting, escapes, embedded
// line breaks, line numbers of multi-line rows, and the quoting errors. Messages are compared
// exactly.
#include <string>
#include <vector>

#include "framework/data/record_reader.h"
#include "gtest/gtest.h"
#include "tests/framework/data/temp_files.h"

namespace xlmr::data {
namespace {

using testing::WriteTempFile;

std::vector<Record> ReadOk(const std::string& path) {
  absl::StatusOr<std::vector<Record>> records = ReadRecords(path, ColumnSpec(), true);
  EXPECT_TRUE(records.ok()) << records.status();
  return records.ok() ? *records : std::vector<Record>();
}

std::string ErrorOf(const std::string& path) {
  absl::StatusOr<std::vector<Record>> records = ReadRecords(path, ColumnSpec(), true);
  EXPECT_FALSE(records.ok()) << "read " << path << " without error";
  return records.ok() ? "" : std::string(records.status().message());
}

TEST(CsvReaderTest, QuotedFieldsHoldCommasQuotesAndLineBreaks) {
  const std::string path = WriteTempFile("quoting.csv",
                                         "\"text\",label\n"
                                         "\"a, b\",pos\n"
                                         "\"she said \"\"hi\"\"\",neg\n"
                                         "\"two\nlines\",pos\n"
                                         "\"crlf\r\ninside\",neg\n"
                                         "plain,\"pos\"\n");
  std::vector<Record> records = ReadOk(path);
  ASSERT_EQ(records.size(), 5u);
  EXPECT_EQ(records[0].text, "a, b");
  EXPECT_EQ(records[1].text, "she said \"hi\"");
  EXPECT_EQ(records[2].text, "two\nlines");
  EXPECT_EQ(records[3].text, "crlf\r\ninside");  // line breaks inside quotes are kept verbatim
  EXPECT_EQ(records[4].text, "plain");
  EXPECT_EQ(records[4].label, "pos");
  // Each record reports the line it starts on; rows 3 and 4 span two lines each.
  std::vector<int64_t> lines;
  for (const Record& record : records) lines.push_back(record.line);
  EXPECT_EQ(lines, (std::vector<int64_t>{2, 3, 4, 6, 8}));
}

TEST(CsvReaderTest, CrLfBomBlankLinesAndMissingFinalNewline) {
  const std::string path =
      WriteTempFile("crlf.csv", "\xEF\xBB\xBFtext,label\r\n\r\nhello,pos\r\nbye,neg");
  std::vector<Record> records = ReadOk(path);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].text, "hello");
  EXPECT_EQ(records[0].label, "pos");
  EXPECT_EQ(records[0].line, 3);
  EXPECT_EQ(records[1].label, "neg");
}

TEST(CsvReaderTest, QuoteInsideAnUnquotedFieldIsText) {
  const std::string path = WriteTempFile("inner_quote.csv", "text,label\n5\" tall,pos\n");
  std::vector<Record> records = ReadOk(path);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].text, "5\" tall");
}

TEST(CsvReaderTest, EmptyQuotedTextIsEmptyText) {
  const std::string path = WriteTempFile("empty_quoted.csv", "text,label\n\"\",pos\n");
  EXPECT_EQ(ErrorOf(path), path + ":2: empty text in column 'text' (--text_column)");
}

TEST(CsvReaderTest, TextAfterClosingQuoteIsAnError) {
  const std::string path = WriteTempFile("after_quote.csv", "text,label\n\"a\"b,pos\n");
  EXPECT_EQ(ErrorOf(path), path +
                               ":2: unexpected text after a closing quote (inside a quoted "
                               "field, write a quote as \"\")");
}

TEST(CsvReaderTest, UnclosedQuoteNamesTheLineItStartsOn) {
  const std::string path =
      WriteTempFile("unclosed.csv", "text,label\nok,pos\n\"never\nclosed,neg\n");
  EXPECT_EQ(ErrorOf(path), path + ":3: a quoted field starts on this line and is never closed");
}

TEST(CsvReaderTest, FieldCountMustMatchTheHeader) {
  const std::string path = WriteTempFile("count.csv", "text,label\n\"a,b\",pos,extra\n");
  EXPECT_EQ(ErrorOf(path), path + ":2: expected 2 comma-separated fields, found 3");
  const std::string trailing = WriteTempFile("trailing.csv", "text,label\na,pos,\n");
  EXPECT_EQ(ErrorOf(trailing), trailing + ":2: expected 2 comma-separated fields, found 3");
}

TEST(CsvReaderTest, MissingColumnListsTheHeader) {
  const std::string path = WriteTempFile("train.csv", "text,label\nhello,pos\n");
  ColumnSpec columns;
  columns.text_column = "sentence";
  absl::StatusOr<std::vector<Record>> records = ReadRecords(path, columns, true);
  ASSERT_FALSE(records.ok());
  EXPECT_EQ(records.status().message(),
            path + ": no column 'sentence' (columns: text, label); set --text_column");
}

}  // namespace
}  // namespace xlmr::data
