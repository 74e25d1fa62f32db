#include "framework/data/qa_example_reader.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/framework/data/temp_files.h"

namespace xlmr::data {
namespace {

using ::testing::HasSubstr;
using testing::WriteTempFile;

const char kSquad[] = R"({"version": "v2.0", "data": [{"title": "t", "paragraphs": [
  {"context": "Zoë lives in Zürich. Zürich is in Switzerland.", "qas": [
    {"id": "a1", "question": "Where does Zoë live?", "is_impossible": false,
     "answers": [{"text": "Zürich", "answer_start": 13}, {"text": "in Zürich", "answer_start": 10}]},
    {"id": "a2", "question": "Who lives in Bern?", "is_impossible": true, "answers": [],
     "plausible_answers": [{"text": "Zoë", "answer_start": 0}]}]}]}]})";

TEST(QaExampleReaderTest, ReadsSquadJsonWithCharacterOffsets) {
  const auto examples = ReadQaExamples(WriteTempFile("squad.json", kSquad));
  ASSERT_TRUE(examples.ok()) << examples.status();
  ASSERT_EQ(examples->size(), 2u);
  const QaExample& first = (*examples)[0];
  EXPECT_EQ(first.id, "a1");
  EXPECT_EQ(first.question, "Where does Zoë live?");
  ASSERT_EQ(first.answers.size(), 2u);
  // "Zoë" has a 2-byte ë: character 13 is byte 14.
  EXPECT_EQ(first.answers[0].answer_start, 13);
  EXPECT_EQ(first.answers[0].start_byte, 14);
  EXPECT_EQ(first.context.substr(14, first.answers[0].text.size()), "Zürich");
  EXPECT_TRUE((*examples)[1].answers.empty());
}

TEST(QaExampleReaderTest, ReadsHuggingFaceJsonLines) {
  const std::string path = WriteTempFile(
      "qa.jsonl",
      "{\"id\": \"x\", \"title\": \"t\", \"context\": \"día y noche\", \"question\": \" ¿qué?\", "
      "\"answers\": {\"text\": [\"noche\"], \"answer_start\": [6]}}\n\n"
      "{\"id\": \"y\", \"context\": \"c\", \"question\": \"q\", "
      "\"answers\": {\"text\": [], \"answer_start\": []}}\n");
  const auto examples = ReadQaExamples(path);
  ASSERT_TRUE(examples.ok()) << examples.status();
  ASSERT_EQ(examples->size(), 2u);
  EXPECT_EQ((*examples)[0].answers[0].start_byte, 7);
  EXPECT_EQ((*examples)[0].where, path + ":1");
  EXPECT_EQ((*examples)[1].where, path + ":3");
  EXPECT_EQ((*examples)[1].line, 3);
  EXPECT_TRUE((*examples)[1].answers.empty());
}

struct BadCase {
  const char* content;
  const char* message;
};

TEST(QaExampleReaderTest, BadInputIsOneLineNamingTheLineAndId) {
  const BadCase cases[] = {
      {R"({"id": "x", "context": "abc", "question": "q", "answers": {"text": ["bc"], "answer_start": [0]}})",
       ":1: id 'x': answer 0: answer_start 0 points at 'ab', not at its text 'bc'"},
      {R"({"id": "x", "context": "abc", "question": "q", "answers": {"text": ["c"], "answer_start": [7]}})",
       ":1: id 'x': answer 0: answer_start 7 is outside the context (3 characters)"},
      {R"({"id": "x", "context": "abc", "answers": {"text": [], "answer_start": []}})",
       ":1: id 'x': missing \"question\""},
      {R"({"id": "x", "context": "abc", "question": "q", "answers": {"text": ["a"], "answer_start": []}})",
       ":1: id 'x': answers has 1 texts but 0 answer_start values"},
      {R"({"context": "abc", "question": "q"})", ":1: missing \"id\""},
      {"{\"id\": \"x\", \"context\": \"a\", \"question\": \"q\", \"answers\": {\"text\": [], "
       "\"answer_start\": []}}\n{\"id\": \"x\", \"context\": \"a\", \"question\": \"q\", "
       "\"answers\": {\"text\": [], \"answer_start\": []}}",
       ":2: id 'x' occurs twice"},
      {"{not json", ":1: not a valid JSON line"},
  };
  for (const BadCase& c : cases) {
    const auto examples = ReadQaExamples(WriteTempFile("bad.jsonl", c.content));
    ASSERT_FALSE(examples.ok()) << c.content;
    EXPECT_THAT(examples.status().message(), HasSubstr(std::string("bad.jsonl") + c.message));
    EXPECT_EQ(examples.status().message().find('\n'), std::string::npos);
  }
}

TEST(QaExampleReaderTest, SquadErrorsNameTheId) {
  const auto examples = ReadQaExamples(WriteTempFile(
      "bad_squad.json",
      R"({"data": [{"paragraphs": [{"context": "abc", "qas": [{"id": "q7", "question": "?",
          "answers": [{"text": "abd", "answer_start": 0}]}]}]}]})"));
  ASSERT_FALSE(examples.ok());
  EXPECT_THAT(examples.status().message(),
              HasSubstr("bad_squad.json: id 'q7': answer 0: answer_start 0 points at 'abc'"));
  const auto missing = ReadQaExamples(WriteTempFile(
      "bad_squad.json", R"({"data": [{"paragraphs": [{"qas": []}]}]})"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(),
              HasSubstr("bad_squad.json: data[0].paragraphs[0]: missing \"context\""));
}

// Data to predict may leave "answers" out (QaAnswers::kOptional): such an example has no gold
// answers; one that has them is still checked. Training data (kRequired) still needs them.
TEST(QaExampleReaderTest, AnswersAreOptionalOnlyForPrediction) {
  const std::string lines = WriteTempFile(
      "predict.jsonl",
      "{\"id\": \"x\", \"context\": \"abc\", \"question\": \"q\"}\n"
      "{\"id\": \"y\", \"context\": \"abc\", \"question\": \"q\", "
      "\"answers\": {\"text\": [\"bc\"], \"answer_start\": [1]}}\n");
  const auto optional = ReadQaExamples(lines, QaAnswers::kOptional);
  ASSERT_TRUE(optional.ok()) << optional.status();
  ASSERT_EQ(optional->size(), 2u);
  EXPECT_FALSE((*optional)[0].has_answers);
  EXPECT_TRUE((*optional)[0].answers.empty());
  EXPECT_TRUE((*optional)[1].has_answers);
  EXPECT_EQ((*optional)[1].answers[0].start_byte, 1);
  const auto required = ReadQaExamples(lines);
  ASSERT_FALSE(required.ok());
  EXPECT_THAT(required.status().message(), HasSubstr("predict.jsonl:1: id 'x': missing \"answers\""));

  const std::string squad = WriteTempFile(
      "predict.json", R"({"data": [{"paragraphs": [{"context": "abc", "qas": [{"id": "q1", "question": "?"},
          {"id": "q2", "question": "?", "answers": []}]}]}]})");
  const auto squad_optional = ReadQaExamples(squad, QaAnswers::kOptional);
  ASSERT_TRUE(squad_optional.ok()) << squad_optional.status();
  EXPECT_FALSE((*squad_optional)[0].has_answers);
  EXPECT_TRUE((*squad_optional)[1].has_answers);  // an empty list is given answers: unanswerable
  const auto squad_required = ReadQaExamples(squad);
  ASSERT_FALSE(squad_required.ok());
  EXPECT_THAT(squad_required.status().message(), HasSubstr("predict.json: id 'q1': missing \"answers\""));

  // Answers that are given are checked under kOptional too.
  const auto wrong = ReadQaExamples(
      WriteTempFile("wrong.jsonl", R"({"id": "z", "context": "abc", "question": "q", "answers": {"text": ["bc"], "answer_start": [0]}})"),
      QaAnswers::kOptional);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.status().message(), HasSubstr("wrong.jsonl:1: id 'z': answer 0: answer_start 0 points at 'ab'"));
}

}  // namespace
}  // namespace xlmr::data
