#include "models/tokenizers/sentencepiece/sentencepiece_tokenizer.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace xlmr::models {
namespace {

using nlohmann::json;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::Lt;
using ::testing::Pair;

// Runfiles-relative: Bazel runs tests in the main workspace's runfiles root. Both files come
// from testdata/make_tokenizer_testdata.py: a 500-piece unigram model trained by spm_train, and
// ids from Python sentencepiece + fairseq mapping, cross-checked with HF's slow and fast tokenizers.
const char kModel[] = "tests/models/tokenizers/sentencepiece/testdata/tiny_unigram.model";
const char kCases[] = "tests/models/tokenizers/sentencepiece/testdata/tokenizer_cases.json";
constexpr int64_t kSpmSize = 500;
constexpr int64_t kVocabSize = kSpmSize + 2;  // + <pad>, <mask>, as xlm-roberta's 250002

SentencePieceTokenizer LoadTokenizer() {
  absl::StatusOr<SentencePieceTokenizer> tokenizer = SentencePieceTokenizer::Load(kModel, kVocabSize);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return std::move(tokenizer).value();
}

json ReadCases() {
  std::ifstream file(kCases);
  EXPECT_TRUE(file.good()) << kCases;
  json cases = json::parse(file);
  EXPECT_EQ(cases.at("spm_size"), kSpmSize);
  return cases.at("cases");
}

std::optional<std::string> PairOf(const json& c) {
  if (c.at("pair").is_null()) return std::nullopt;
  return c.at("pair").get<std::string>();
}

std::optional<absl::string_view> View(const std::optional<std::string>& pair) {
  if (!pair.has_value()) return std::nullopt;
  return absl::string_view(*pair);
}

std::string Describe(const json& c) { return c.dump().substr(0, 200); }

// Ids are integers: every case must match exactly (no tolerance).
TEST(SentencePieceTokenizerTest, MatchesHuggingFaceSlowTokenizerOnEveryCase) {
  const SentencePieceTokenizer tokenizer = LoadTokenizer();
  const json cases = ReadCases();
  ASSERT_GT(cases.size(), 300u);
  for (const json& c : cases) {
    const std::optional<std::string> pair = PairOf(c);
    const Encoding encoding =
        tokenizer.Encode(c.at("text").get<std::string>(), View(pair),
                         c.at("max_length").get<int>(), PairTruncation::kSlowTokenizer);
    EXPECT_EQ(encoding.input_ids, c.at("input_ids").get<std::vector<int32_t>>()) << Describe(c);
    EXPECT_EQ(encoding.attention_mask, std::vector<int32_t>(encoding.input_ids.size(), 1));
  }
}

TEST(SentencePieceTokenizerTest, FastTruncationRuleMatchesHuggingFaceFastTokenizer) {
  const SentencePieceTokenizer tokenizer = LoadTokenizer();
  int cases_where_rules_differ = 0;
  for (const json& c : ReadCases()) {
    // Absent: the fast tokenizer agreed with input_ids; null: not comparable (empty pair).
    if (c.contains("input_ids_fast") && c.at("input_ids_fast").is_null()) continue;
    const json& expected = c.contains("input_ids_fast") ? c.at("input_ids_fast") : c.at("input_ids");
    cases_where_rules_differ += c.contains("input_ids_fast");
    const std::optional<std::string> pair = PairOf(c);
    const Encoding encoding =
        tokenizer.Encode(c.at("text").get<std::string>(), View(pair),
                         c.at("max_length").get<int>(), PairTruncation::kFastTokenizer);
    EXPECT_EQ(encoding.input_ids, expected.get<std::vector<int32_t>>()) << Describe(c);
  }
  EXPECT_GT(cases_where_rules_differ, 0) << "no case tells the two rules apart";
}

TEST(SentencePieceTokenizerTest, EncodeTextIsTheSingleSequenceWithoutSpecials) {
  const SentencePieceTokenizer tokenizer = LoadTokenizer();
  for (const json& c : ReadCases()) {
    if (!c.at("pair").is_null() || c.at("max_length") != 512) continue;
    std::vector<int32_t> expected = c.at("input_ids").get<std::vector<int32_t>>();
    expected = std::vector<int32_t>(expected.begin() + 1, expected.end() - 1);
    const std::vector<int32_t> ids = tokenizer.EncodeText(c.at("text").get<std::string>());
    EXPECT_EQ(ids, expected) << Describe(c);
    // Text never yields <s>, <pad>, </s> or an id past the SentencePiece pieces (<mask> = 501).
    EXPECT_THAT(ids, Each(Lt(tokenizer.mask_id())));
    for (int32_t id : ids) EXPECT_GE(id, SentencePieceTokenizer::kUnk) << Describe(c);
  }
}

TEST(SentencePieceTokenizerTest, SpecialIdsFollowFairseq) {
  const SentencePieceTokenizer tokenizer = LoadTokenizer();
  EXPECT_EQ(tokenizer.spm_size(), kSpmSize);
  EXPECT_EQ(tokenizer.mask_id(), kSpmSize + 1);
  // Thai is absent from the training corpus, so its characters map to <unk> = 3.
  const std::vector<int32_t> thai = tokenizer.EncodeText("ไม่");
  EXPECT_NE(std::find(thai.begin(), thai.end(), SentencePieceTokenizer::kUnk), thai.end());
  const Encoding empty_pair = tokenizer.Encode("", absl::string_view(""), 4);
  EXPECT_EQ(empty_pair.input_ids, (std::vector<int32_t>{0, 2, 2, 2}));
  EXPECT_EQ(tokenizer.Encode("", std::nullopt, 2).input_ids, (std::vector<int32_t>{0, 2}));
}

// Hand-worked cases of longest_first; budget = max_length - 4.
TEST(PairKeepLengthsTest, SharesTheBudgetLikeHuggingFace) {
  const auto slow = PairTruncation::kSlowTokenizer;
  const auto fast = PairTruncation::kFastTokenizer;
  EXPECT_THAT(PairKeepLengths(3, 4, 7, slow), Pair(3, 4));  // fits
  EXPECT_THAT(PairKeepLengths(2, 8, 5, slow), Pair(2, 3));  // only the longer one is cut
  EXPECT_THAT(PairKeepLengths(8, 2, 5, fast), Pair(3, 2));
  EXPECT_THAT(PairKeepLengths(6, 6, 8, slow), Pair(4, 4));  // both cut, even budget
  EXPECT_THAT(PairKeepLengths(6, 6, 8, fast), Pair(4, 4));
  // Both cut, odd budget: slow favours the first text, fast the longer (the second on a tie).
  EXPECT_THAT(PairKeepLengths(3, 3, 3, slow), Pair(2, 1));
  EXPECT_THAT(PairKeepLengths(3, 3, 3, fast), Pair(1, 2));
  EXPECT_THAT(PairKeepLengths(4, 9, 5, slow), Pair(3, 2));
  EXPECT_THAT(PairKeepLengths(4, 9, 5, fast), Pair(2, 3));
  EXPECT_THAT(PairKeepLengths(9, 4, 5, slow), Pair(3, 2));
  EXPECT_THAT(PairKeepLengths(9, 4, 5, fast), Pair(3, 2));
  EXPECT_THAT(PairKeepLengths(5, 7, 0, slow), Pair(0, 0));
}

TEST(SentencePieceTokenizerTest, LoadErrorsNameTheFile) {
  absl::StatusOr<SentencePieceTokenizer> missing = SentencePieceTokenizer::Load("no/such.model", kVocabSize);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("no/such.model: cannot load"));

  absl::StatusOr<SentencePieceTokenizer> not_a_model = SentencePieceTokenizer::Load(kCases, kVocabSize);
  ASSERT_FALSE(not_a_model.ok());
  EXPECT_THAT(std::string(not_a_model.status().message()),
              HasSubstr(std::string(kCases) + ": cannot load SentencePiece model"));

  // 500 pieces + <pad> + <mask> need 502 embedding rows; 501 would let <mask> index past them.
  absl::StatusOr<SentencePieceTokenizer> too_small = SentencePieceTokenizer::Load(kModel, kVocabSize - 1);
  ASSERT_FALSE(too_small.ok());
  EXPECT_THAT(std::string(too_small.status().message()),
              HasSubstr(std::string(kModel) + ": 500 pieces need vocab_size >= 502"));
  EXPECT_THAT(std::string(too_small.status().message()), HasSubstr("config vocab_size is 501"));
}

TEST(SentencePieceTokenizerDeathTest, MaxLengthMustHoldTheSpecialTokens) {
  const SentencePieceTokenizer tokenizer = LoadTokenizer();
  EXPECT_DEATH(tokenizer.Encode("a", absl::string_view("b"), 3), "cannot hold the 4 special");
  EXPECT_DEATH(tokenizer.Encode("a", std::nullopt, 1), "cannot hold the 2 special");
}

// EncodeWords against Hugging Face's fast tokenizer with is_split_into_words=True
// (tests/golden/make_word_encodings.py): accents, CJK, punctuation-only and very long words,
// numbers, mixed scripts, normalizer rewrites, a word with no piece, and truncation at eight
// max_length values, on two models. Ids are integers: exact match, no tolerance.
TEST(SentencePieceTokenizerTest, EncodeWordsMatchesHuggingFaceFastTokenizerOnSplitWords) {
  std::ifstream file("tests/golden/word_encodings.json");
  ASSERT_TRUE(file.good());
  const json golden = json::parse(file);
  std::map<std::string, SentencePieceTokenizer> tokenizers;
  for (const auto& [name, path] : golden.at("models").items()) {
    // Each model's embedding table has its pieces + <pad> + <mask> rows.
    absl::StatusOr<SentencePieceTokenizer> tokenizer =
        SentencePieceTokenizer::Load(path.get<std::string>(), name == "tiny" ? 502 : 8002);
    ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
    tokenizers.emplace(name, std::move(tokenizer).value());
  }
  int cases = 0;
  int truncated_words = 0;
  for (const json& c : golden.at("cases")) {
    const SentencePieceTokenizer& tokenizer = tokenizers.at(c.at("model").get<std::string>());
    const WordEncoding encoding = tokenizer.EncodeWords(
        c.at("words").get<std::vector<std::string>>(), c.at("max_length").get<int>());
    EXPECT_EQ(encoding.input_ids, c.at("input_ids").get<std::vector<int32_t>>()) << Describe(c);
    EXPECT_EQ(encoding.word_ids, c.at("word_ids").get<std::vector<int32_t>>()) << Describe(c);
    ++cases;
    truncated_words += c.at("max_length").get<int>() == static_cast<int>(encoding.input_ids.size());
  }
  EXPECT_EQ(cases, 288);
  EXPECT_GT(truncated_words, 100);  // the truncation path is exercised, not only the short lists
}

TEST(SentencePieceTokenizerTest, EncodeWordsKeepsAWordsPiecesTogetherAndMarksSpecials) {
  const SentencePieceTokenizer tokenizer = LoadTokenizer();
  const std::vector<std::string> words = {"Hello", "world", "."};
  const WordEncoding encoding = tokenizer.EncodeWords(words, 512);
  std::vector<int32_t> expected_ids = {SentencePieceTokenizer::kBos};
  std::vector<int32_t> expected_words = {-1};
  for (size_t w = 0; w < words.size(); ++w) {
    const std::vector<int32_t> pieces = tokenizer.EncodeText(words[w]);
    expected_ids.insert(expected_ids.end(), pieces.begin(), pieces.end());
    expected_words.insert(expected_words.end(), pieces.size(), static_cast<int32_t>(w));
  }
  expected_ids.push_back(SentencePieceTokenizer::kEos);
  expected_words.push_back(-1);
  EXPECT_EQ(encoding.input_ids, expected_ids);
  EXPECT_EQ(encoding.word_ids, expected_words);
  // max_length 2 keeps only the specials.
  const WordEncoding empty = tokenizer.EncodeWords(words, 2);
  EXPECT_EQ(empty.input_ids, std::vector<int32_t>({SentencePieceTokenizer::kBos, SentencePieceTokenizer::kEos}));
  EXPECT_EQ(empty.word_ids, std::vector<int32_t>({-1, -1}));
}

}  // namespace
}  // namespace xlmr::models
