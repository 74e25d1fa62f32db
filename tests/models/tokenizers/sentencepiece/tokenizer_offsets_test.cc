// SentencePieceTokenizer::EncodeTextWithOffsets against Hugging Face's fast tokenizer's offset_mapping
// (testdata/offset_cases.json, made by testdata/make_offset_testdata.py from transformers).
#include <fstream>
#include <string>
#include <vector>

#include "framework/core/utf8.h"
#include "gtest/gtest.h"
#include "models/tokenizers/sentencepiece/sentencepiece_tokenizer.h"
#include "nlohmann/json.hpp"

namespace xlmr::models {
namespace {

using nlohmann::json;

const char kCases[] = "tests/models/tokenizers/sentencepiece/testdata/offset_cases.json";
const char kLangidModel[] = "recipes/data/langid/sentencepiece.bpe.model";

json ReadCases() {
  std::ifstream file(kCases);
  EXPECT_TRUE(file.good()) << kCases;
  return json::parse(file).at("models");
}

SentencePieceTokenizer Load(const std::string& path) {
  absl::StatusOr<SentencePieceTokenizer> tokenizer = SentencePieceTokenizer::Load(path, 1 << 20);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return std::move(tokenizer).value();
}

// Offsets are integers: every token of every case must match exactly (no tolerance). HF counts
// characters, we count bytes: the golden character offsets are converted through the text.
TEST(TokenizerOffsetsTest, EqualHuggingFaceFastOffsetMappingOnEveryCase) {
  const json models = ReadCases();
  ASSERT_EQ(models.size(), 2u);
  for (const auto& [name, model] : models.items()) {
    const SentencePieceTokenizer tokenizer = Load(model.at("model").get<std::string>());
    ASSERT_GE(model.at("cases").size(), 50u) << name;
    int tokens = 0;
    for (const json& c : model.at("cases")) {
      const std::string text = c.at("text").get<std::string>();
      const std::vector<size_t> starts = core::Utf8CharStarts(text);
      std::vector<TokenSpan> spans;
      const std::vector<int32_t> ids = tokenizer.EncodeTextWithOffsets(text, &spans);
      ASSERT_EQ(ids, c.at("input_ids").get<std::vector<int32_t>>()) << name << ": " << text;
      ASSERT_EQ(spans.size(), ids.size());
      const json& offsets = c.at("offsets");
      for (size_t t = 0; t < spans.size(); ++t) {
        const int64_t begin = starts.at(offsets[t][0].get<size_t>());
        const int64_t end = starts.at(offsets[t][1].get<size_t>());
        EXPECT_EQ(spans[t].begin, begin) << name << " token " << t << " of: " << text;
        EXPECT_EQ(spans[t].end, end) << name << " token " << t << " of: " << text;
        ++tokens;
      }
    }
    EXPECT_GT(tokens, 1000) << name;
  }
}

TEST(TokenizerOffsetsTest, IdsAreEncodeTexts) {
  const SentencePieceTokenizer tokenizer = Load(kLangidModel);
  for (const std::string text : {"Hello  world", "", "   ", "Über 3,5 km\u00a0…"}) {
    std::vector<TokenSpan> spans;
    EXPECT_EQ(tokenizer.EncodeTextWithOffsets(text, &spans), tokenizer.EncodeText(text)) << text;
  }
}

// Spelled out once by hand, so that a reader sees the rules: the spaces before a word belong to
// no token, and a lone "▁" covers the first character of its word.
TEST(TokenizerOffsetsTest, SpacesBelongToNoTokenAndALoneMetaCoversTheNextCharacter) {
  const SentencePieceTokenizer tokenizer = Load(kLangidModel);
  std::vector<TokenSpan> spans;
  const std::string text = "a ,  b";
  tokenizer.EncodeTextWithOffsets(text, &spans);
  // HF: ['▁a', '▁', ',', '▁b'] -> (0,1) (2,3) (2,3) (5,6).
  ASSERT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[0].begin, 0);
  EXPECT_EQ(spans[0].end, 1);
  EXPECT_EQ(spans[1].begin, 2);
  EXPECT_EQ(spans[1].end, 3);
  EXPECT_EQ(spans[2].begin, 2);
  EXPECT_EQ(spans[2].end, 3);
  EXPECT_EQ(spans[3].begin, 5);
  EXPECT_EQ(spans[3].end, 6);
}

// Text the per-character view cannot reproduce (three conjoining Hangul jamo composed into one
// syllable) falls back to SentencePiece's spans: still inside the text and in order.
TEST(TokenizerOffsetsTest, FallbackSpansStayInsideTheText) {
  const SentencePieceTokenizer tokenizer = Load(kLangidModel);
  const std::string text = "\u1100\u1161\u11A8 \u1100\u1161\u11A8x";
  std::vector<TokenSpan> spans;
  tokenizer.EncodeTextWithOffsets(text, &spans);
  ASSERT_FALSE(spans.empty());
  int64_t previous = 0;
  for (const TokenSpan& span : spans) {
    EXPECT_LE(previous, span.begin);
    EXPECT_LE(span.begin, span.end);
    EXPECT_LE(span.end, static_cast<int64_t>(text.size()));
    previous = span.begin;
  }
}

}  // namespace
}  // namespace xlmr::models
