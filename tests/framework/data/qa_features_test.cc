// PrepareQaFeatures against transformers' tokenizer call as run_qa.py makes it
// (testdata/qa_features.json, made by testdata/make_qa_features_testdata.py), with the
// tokenizer of the embedded examples.
#include "framework/data/qa_features.h"

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "framework/core/utf8.h"
#include "framework/data/qa_example_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/tokenizers/sentencepiece/sentencepiece_tokenizer.h"
#include "nlohmann/json.hpp"

namespace xlmr::data {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const char kModel[] = "recipes/data/langid/sentencepiece.bpe.model";
const char kExamples[] = "tests/framework/data/testdata/qa_examples.jsonl";
const char kGolden[] = "tests/framework/data/testdata/qa_features.json";

class QaFeaturesTest : public ::testing::Test {
 protected:
  QaFeaturesTest() : tokenizer_(models::SentencePieceTokenizer::Load(kModel, 1 << 20).value()) {}

  TokenizeWithSpansFn Tokenize() const {
    return [this](const std::string& text, std::vector<TextSpan>* spans) {
      std::vector<models::TokenSpan> token_spans;
      std::vector<int32_t> ids = tokenizer_.EncodeTextWithOffsets(text, &token_spans);
      spans->clear();
      for (const models::TokenSpan& span : token_spans) spans->push_back({span.begin, span.end});
      return ids;
    };
  }

  models::SentencePieceTokenizer tokenizer_;
};

// Ids, offsets and labels are integers: every window must match exactly (no tolerance).
TEST_F(QaFeaturesTest, EqualTransformersWindowsOffsetsAndRunQaLabels) {
  const auto examples = ReadQaExamples(kExamples);
  ASSERT_TRUE(examples.ok()) << examples.status();
  std::ifstream file(kGolden);
  ASSERT_TRUE(file.good()) << kGolden;
  const json golden = json::parse(file);
  int labelled = 0, windows_of_long_contexts = 0;
  for (const json& setting : golden.at("settings")) {
    QaFeatureOptions options;
    options.max_seq_length = setting.at("max_seq_length").get<int>();
    options.doc_stride = setting.at("doc_stride").get<int>();
    const auto features = PrepareQaFeatures(*examples, Tokenize(), options);
    ASSERT_TRUE(features.ok()) << features.status();
    const json& expected = setting.at("features");
    ASSERT_EQ(features->size(), expected.size()) << "max_seq_length " << options.max_seq_length;
    for (size_t f = 0; f < features->size(); ++f) {
      const QaFeature& feature = (*features)[f];
      const json& want = expected[f];
      const std::string where = "max_seq_length " + std::to_string(options.max_seq_length) +
                                ", window " + std::to_string(f);
      ASSERT_EQ(feature.example_index, want.at("example_index").get<int64_t>()) << where;
      ASSERT_EQ(feature.input_ids, want.at("input_ids").get<std::vector<int32_t>>()) << where;
      const std::string& context = (*examples)[feature.example_index].context;
      const std::vector<size_t> starts = core::Utf8CharStarts(context);
      for (size_t t = 0; t < feature.input_ids.size(); ++t) {
        const json& offset = want.at("offsets")[t];
        ASSERT_EQ(feature.is_context[t] == 1, !offset.is_null()) << where << " token " << t;
        if (offset.is_null()) continue;
        EXPECT_EQ(feature.offsets[t].begin, static_cast<int64_t>(starts.at(offset[0])))
            << where << " token " << t;
        EXPECT_EQ(feature.offsets[t].end, static_cast<int64_t>(starts.at(offset[1])))
            << where << " token " << t;
      }
      EXPECT_EQ(feature.start_position, want.at("start_position").get<int32_t>()) << where;
      EXPECT_EQ(feature.end_position, want.at("end_position").get<int32_t>()) << where;
      labelled += feature.start_position > 0;
      windows_of_long_contexts += f > 0 && feature.example_index == expected[f - 1].at("example_index");
    }
  }
  // The golden data must exercise labels and windows, or this test proves little.
  EXPECT_GT(labelled, 40);
  EXPECT_GT(windows_of_long_contexts, 50);
}

QaExample Example(std::string question, std::string context, std::string answer,
                  int64_t start_byte) {
  QaExample example;
  example.id = "e";
  example.where = "f.jsonl:1";
  example.question = std::move(question);
  example.context = std::move(context);
  if (!answer.empty()) example.answers.push_back({std::move(answer), 0, start_byte});
  return example;
}

// The answer starts in the window's last context token: run_qa's scan would run on through
// </s> (offsets (0, 0)) and label it; ours stops at the context (docs/DECISIONS.md).
TEST_F(QaFeaturesTest, AnAnswerInTheLastContextTokenIsLabelledThere) {
  const std::string context = "un deux trois quatre cinq six sept huit neuf dix";
  std::vector<TextSpan> spans;
  Tokenize()(context, &spans);
  const TextSpan last = spans.back();  // the answer is the last token's text
  const QaExample example = Example("q", context, context.substr(last.begin, last.end - last.begin),
                                    last.begin);
  QaFeatureOptions options;
  options.max_seq_length = 64;
  const auto features = PrepareQaFeatures({example}, Tokenize(), options);
  ASSERT_TRUE(features.ok()) << features.status();
  ASSERT_EQ(features->size(), 1u);
  const QaFeature& feature = features->front();
  const int32_t last_context = static_cast<int32_t>(feature.input_ids.size()) - 2;
  EXPECT_EQ(feature.start_position, last_context);
  EXPECT_EQ(feature.end_position, last_context);
}

TEST_F(QaFeaturesTest, BadInputNamesTheExample) {
  QaFeatureOptions options;
  options.max_seq_length = 16;
  options.doc_stride = 4;
  const auto empty = PrepareQaFeatures({Example("q", "   ", "", 0)}, Tokenize(), options);
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("f.jsonl:1: id 'e': the context has no tokens"));
  const auto long_question = PrepareQaFeatures(
      {Example("one two three four five six seven eight nine ten", "a b c d e f g h i j k l m",
               "", 0)},
      Tokenize(), options);
  ASSERT_FALSE(long_question.ok());
  EXPECT_THAT(long_question.status().message(),
              HasSubstr("f.jsonl:1: id 'e': the question has"));
}

}  // namespace
}  // namespace xlmr::data
