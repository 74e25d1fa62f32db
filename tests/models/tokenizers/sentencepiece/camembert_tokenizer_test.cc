// SentencePieceTokenizer with CamemBERT's id mapping (SentencePieceIdMapping::Camembert()) against
// transformers' CamembertTokenizer (fast, the tokenizers backend): testdata/camembert_cases.json
// and testdata/camembert_unigram.model, made by testdata/make_camembert_testdata.py with a
// SentencePiece model trained there on the repo's own text.
//
// Tolerance: none. Ids, offsets and word ids are integers and must equal HF's on every case; a
// single differing id is a different model input, so there is nothing to tolerate.
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/core/utf8.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/tokenizers/sentencepiece/sentencepiece_tokenizer.h"
#include "nlohmann/json.hpp"

namespace xlmr::models {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

const char kCases[] = "tests/models/tokenizers/sentencepiece/testdata/camembert_cases.json";
const char kModel[] = "tests/models/tokenizers/sentencepiece/testdata/camembert_unigram.model";
constexpr int64_t kSpmSize = 2000;
// 5 reserved ids + SentencePiece pieces 1..1999 + <mask>: what HF's vocabulary holds.
constexpr int64_t kVocabSize = kSpmSize + 5;

const json& Cases() {
  static const json* cases = [] {
    std::ifstream file(kCases);
    EXPECT_TRUE(file.good()) << kCases;
    return new json(json::parse(file));
  }();
  return *cases;
}

SentencePieceTokenizer LoadCamembert(int64_t vocab_size = kVocabSize) {
  absl::StatusOr<SentencePieceTokenizer> tokenizer =
      SentencePieceTokenizer::Load(kModel, vocab_size, SentencePieceIdMapping::Camembert());
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return std::move(tokenizer).value();
}

// The ids transformers' CamembertTokenizer gives this model (the generator asserts them too):
// bos/eos are SentencePiece's <s> (1) and </s> (2) shifted by 4, not XLM-R's 0 and 2.
TEST(CamembertTokenizerTest, SpecialIdsAreCamembertConverters) {
  const SentencePieceTokenizer tokenizer = LoadCamembert();
  EXPECT_EQ(Cases().at("spm_size"), kSpmSize);
  EXPECT_EQ(tokenizer.spm_size(), kSpmSize);
  EXPECT_EQ(tokenizer.bos_id(), 5);
  EXPECT_EQ(tokenizer.eos_id(), 6);
  EXPECT_EQ(tokenizer.pad_id(), 1);
  EXPECT_EQ(tokenizer.mask_id(), kSpmSize + 4);
  EXPECT_EQ(tokenizer.Encode("", std::nullopt, 2).input_ids, (std::vector<int32_t>{5, 6}));
  EXPECT_EQ(tokenizer.Encode("", absl::string_view(""), 4).input_ids,
            (std::vector<int32_t>{5, 6, 6, 6}));
}

TEST(CamembertTokenizerTest, IdsAndOffsetsEqualCamembertTokenizerFast) {
  const SentencePieceTokenizer tokenizer = LoadCamembert();
  int64_t texts = 0, tokens = 0, unknown = 0;
  for (const json& c : Cases().at("texts")) {
    const std::string text = c.at("text").get<std::string>();
    const std::vector<int32_t> expected = c.at("ids").get<std::vector<int32_t>>();
    std::vector<TokenSpan> spans;
    const std::vector<int32_t> ids = tokenizer.EncodeTextWithOffsets(text, &spans);
    ASSERT_EQ(ids, expected) << "\"" << text << "\"";
    ASSERT_EQ(tokenizer.EncodeText(text), expected) << "\"" << text << "\"";
    // HF counts characters, we count bytes: convert the golden offsets through the text.
    const std::vector<size_t> starts = core::Utf8CharStarts(text);
    const json& offsets = c.at("offsets");
    ASSERT_EQ(offsets.size(), 2 * spans.size());
    for (size_t t = 0; t < spans.size(); ++t) {
      const int64_t begin = starts.at(offsets[2 * t].get<size_t>());
      const int64_t end = starts.at(offsets[2 * t + 1].get<size_t>());
      ASSERT_EQ(spans[t].begin, begin) << "token " << t << " of \"" << text << "\"";
      ASSERT_EQ(spans[t].end, end) << "token " << t << " of \"" << text << "\"";
    }
    ++texts;
    tokens += static_cast<int64_t>(ids.size());
    for (int32_t id : ids) unknown += id == SentencePieceTokenizer::kUnk;
  }
  EXPECT_GT(texts, 1200);
  EXPECT_GT(tokens, 18000);
  EXPECT_GT(unknown, 10);  // the <unk> -> 3 path is exercised (rare CJK, Thai, emoji)
}

TEST(CamembertTokenizerTest, TruncatedPairsEqualCamembertTokenizerFast) {
  const SentencePieceTokenizer tokenizer = LoadCamembert();
  int64_t cases = 0, cut = 0;
  for (const json& c : Cases().at("pairs")) {
    const std::string text = c.at("text").get<std::string>();
    std::optional<std::string> pair;
    if (!c.at("pair").is_null()) pair = c.at("pair").get<std::string>();
    const int max_length = c.at("max_length").get<int>();
    const Encoding e = tokenizer.Encode(text, pair, max_length);
    ASSERT_EQ(e.input_ids, c.at("ids").get<std::vector<int32_t>>())
        << "max_length " << max_length << ": \"" << text << "\" / \"" << pair.value_or("(none)")
        << "\"";
    ASSERT_EQ(e.attention_mask, std::vector<int32_t>(e.input_ids.size(), 1));
    ++cases;
    cut += static_cast<int>(e.input_ids.size()) == max_length;
  }
  EXPECT_GT(cases, 400);
  EXPECT_GT(cut, 200);  // truncation is exercised, not only texts that fit
}

TEST(CamembertTokenizerTest, SplitWordsEqualCamembertTokenizerFast) {
  const SentencePieceTokenizer tokenizer = LoadCamembert();
  int64_t cases = 0;
  for (const json& c : Cases().at("words")) {
    const std::vector<std::string> words = c.at("words").get<std::vector<std::string>>();
    const int max_length = c.at("max_length").get<int>();
    const WordEncoding e = tokenizer.EncodeWords(words, max_length);
    ASSERT_EQ(e.input_ids, c.at("ids").get<std::vector<int32_t>>())
        << "max_length " << max_length << ", first word \"" << (words.empty() ? "" : words[0])
        << "\"";
    ASSERT_EQ(e.word_ids, c.at("word_ids").get<std::vector<int32_t>>())
        << "max_length " << max_length;
    ++cases;
  }
  EXPECT_GT(cases, 200);
}

// The same file read with XLM-R's mapping numbers the pieces one past instead of four past:
// the mapping, not the file, decides the ids.
TEST(CamembertTokenizerTest, TheSameModelWithXlmrMappingGivesXlmrIds) {
  const SentencePieceTokenizer camembert = LoadCamembert();
  absl::StatusOr<SentencePieceTokenizer> xlmr = SentencePieceTokenizer::Load(kModel, kSpmSize + 2);
  ASSERT_TRUE(xlmr.ok()) << xlmr.status();
  EXPECT_EQ(xlmr->bos_id(), 0);
  EXPECT_EQ(xlmr->eos_id(), 2);
  EXPECT_EQ(xlmr->mask_id(), kSpmSize + 1);
  const std::vector<int32_t> c = camembert.EncodeText("Bonjour le monde");
  const std::vector<int32_t> x = xlmr->EncodeText("Bonjour le monde");
  ASSERT_EQ(c.size(), x.size());
  for (size_t i = 0; i < c.size(); ++i) {
    if (x[i] != SentencePieceTokenizer::kUnk) { EXPECT_EQ(c[i], x[i] + 3); }
  }
}

// CamemBERT needs 5 rows more than the pieces: 2004 would let <mask> (2004) index past them.
TEST(CamembertTokenizerTest, LoadRefusesAVocabularyTooSmallForMask) {
  absl::StatusOr<SentencePieceTokenizer> too_small =
      SentencePieceTokenizer::Load(kModel, kVocabSize - 1, SentencePieceIdMapping::Camembert());
  ASSERT_FALSE(too_small.ok());
  EXPECT_THAT(std::string(too_small.status().message()),
              HasSubstr(std::string(kModel) + ": 2000 pieces need vocab_size >= 2005"));
  EXPECT_THAT(std::string(too_small.status().message()), HasSubstr("config vocab_size is 2004"));
}

}  // namespace
}  // namespace xlmr::models
