// RobertaTokenizer against Hugging Face's RobertaTokenizerFast (testdata/roberta_cases.json and
// testdata/codepoint_classes.json, made by testdata/make_roberta_tokenizer_testdata.py from
// transformers and tokenizers, with a BPE trained there on the repo's own text).
//
// Tolerance: none. Ids, offsets and word ids are integers and must equal HF's on every case;
// a single differing token means a different model input, so there is nothing to tolerate.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/core/utf8.h"
#include "gtest/gtest.h"
#include "models/tokenizers/byte_level_bpe/byte_level_pre_tokenizer.h"
#include "models/tokenizers/byte_level_bpe/roberta_tokenizer.h"
#include "nlohmann/json.hpp"

namespace xlmr::models::roberta {
namespace {

using nlohmann::json;

const char kCases[] = "tests/models/tokenizers/byte_level_bpe/testdata/roberta_cases.json";
const char kClasses[] = "tests/models/tokenizers/byte_level_bpe/testdata/codepoint_classes.json";
const char kPlainDir[] = "tests/models/tokenizers/byte_level_bpe/testdata/bpe";

json ReadJson(const char* path) {
  std::ifstream file(path);
  EXPECT_TRUE(file.good()) << path;
  return json::parse(file);
}

const json& Configs() {
  static const json* configs = new json(ReadJson(kCases).at("configs"));
  return *configs;
}

RobertaTokenizer Load(const std::string& dir) {
  absl::StatusOr<RobertaTokenizer> tokenizer = RobertaTokenizer::Load(dir);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return std::move(tokenizer).value();
}

char ClassLetter(CharClass cls) {
  switch (cls) {
    case CharClass::kLetter: return 'L';
    case CharClass::kNumber: return 'N';
    case CharClass::kWhitespace: return 'S';
    case CharClass::kOther: return 'O';
  }
  return '?';
}

// Every code point (surrogates excepted) in the class HF's regex engine gives it: utf8proc's
// categories must agree with Oniguruma's \p{L}, \p{N} and \s everywhere, not only on the
// characters the text cases happen to hold.
TEST(RobertaTokenizerTest, CodePointClassesEqualTokenizersRegexEngine) {
  const json runs = ReadJson(kClasses).at("runs");
  ASSERT_GT(runs.size(), 1000u);
  int64_t checked = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    const int32_t first = runs[r][0].get<int32_t>();
    const int32_t end = r + 1 < runs.size() ? runs[r + 1][0].get<int32_t>() : 0x110000;
    const char expected = runs[r][1].get<std::string>()[0];
    for (int32_t cp = first; cp < end; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      ASSERT_EQ(ClassLetter(ClassifyCodePoint(cp)), expected) << "U+" << std::hex << cp;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 0x110000 - 0x800);
}

TEST(RobertaTokenizerTest, ByteLevelAlphabetIsGpt2s) {
  const auto& alphabet = ByteLevelAlphabet();
  EXPECT_EQ(alphabet['a'], "a");
  EXPECT_EQ(alphabet[' '], "\xC4\xA0");     // U+0120 "Ġ"
  EXPECT_EQ(alphabet['\n'], "\xC4\x8A");    // U+010A "Ċ"
  EXPECT_EQ(alphabet[0], "\xC4\x80");       // U+0100 "Ā"
  EXPECT_EQ(alphabet[0xAD], "\xC5\x83");    // U+0143, the 68th byte moved
  EXPECT_EQ(alphabet[0xE9], "\xC3\xA9");    // "é" stands for itself
}

std::vector<std::string> Pieces(const std::string& text, bool add_prefix_space) {
  std::vector<std::string> pieces;
  for (const PreToken& p : ByteLevelPreTokenize(text, add_prefix_space)) pieces.push_back(p.bytes);
  return pieces;
}

// Readable examples of the pattern (the golden cases check the same rules at scale).
TEST(RobertaTokenizerTest, PreTokenizerFollowsGpt2Pattern) {
  using V = std::vector<std::string>;
  EXPECT_EQ(Pieces("Hello there       dear", false),
            (V{"Hello", " there", "      ", " dear"}));
  EXPECT_EQ(Pieces("Hello\n\nthere  ", false), (V{"Hello", "\n", "\n", "there", "  "}));
  EXPECT_EQ(Pieces("it's I'M !'s", false), (V{"it", "'s", " I", "'", "M", " !'", "s"}));
  EXPECT_EQ(Pieces("x", true), (V{" x"}));
  EXPECT_EQ(Pieces(" x", true), (V{" x"}));
  EXPECT_EQ(Pieces("\tx", true), (V{" ", "\t", "x"}));  // " " kept back by (?!\S)
  EXPECT_EQ(Pieces("", true), V{});
}

TEST(RobertaTokenizerTest, IdsAndOffsetsEqualRobertaTokenizerFast) {
  int64_t texts = 0, tokens = 0;
  for (const auto& [name, config] : Configs().items()) {
    const RobertaTokenizer tokenizer = Load(config.at("dir").get<std::string>());
    for (const json& c : config.at("texts")) {
      const std::string text = c.at("text").get<std::string>();
      const std::vector<int32_t> expected = c.at("ids").get<std::vector<int32_t>>();
      std::vector<TokenSpan> spans;
      const std::vector<int32_t> ids = tokenizer.EncodeTextWithOffsets(text, &spans);
      ASSERT_EQ(ids, expected) << name << ": \"" << text << "\"";
      ASSERT_EQ(tokenizer.EncodeText(text), expected) << name << ": \"" << text << "\"";
      const std::vector<size_t> starts = core::Utf8CharStarts(text);
      const json& offsets = c.at("offsets");
      ASSERT_EQ(offsets.size(), 2 * spans.size());
      for (size_t t = 0; t < spans.size(); ++t) {
        const int64_t begin = starts.at(offsets[2 * t].get<size_t>());
        const int64_t end = starts.at(offsets[2 * t + 1].get<size_t>());
        ASSERT_EQ(spans[t].begin, begin) << name << " token " << t << " of \"" << text << "\"";
        ASSERT_EQ(spans[t].end, end) << name << " token " << t << " of \"" << text << "\"";
      }
      ++texts;
      tokens += static_cast<int64_t>(ids.size());
    }
  }
  EXPECT_GT(texts, 8000);
  EXPECT_GT(tokens, 50000);
}

TEST(RobertaTokenizerTest, TruncatedPairsEqualRobertaTokenizerFast) {
  int64_t cases = 0;
  for (const auto& [name, config] : Configs().items()) {
    const RobertaTokenizer tokenizer = Load(config.at("dir").get<std::string>());
    for (const json& c : config.at("pairs")) {
      const std::string text = c.at("text").get<std::string>();
      std::optional<std::string> pair;
      if (!c.at("pair").is_null()) pair = c.at("pair").get<std::string>();
      const int max_length = c.at("max_length").get<int>();
      const Encoding e = tokenizer.Encode(text, pair, max_length);
      ASSERT_EQ(e.input_ids, c.at("ids").get<std::vector<int32_t>>())
          << name << " max_length " << max_length << ": \"" << text << "\" / \""
          << pair.value_or("(none)") << "\"";
      ASSERT_EQ(e.attention_mask, std::vector<int32_t>(e.input_ids.size(), 1));
      ++cases;
    }
  }
  EXPECT_GT(cases, 1000);
}

TEST(RobertaTokenizerTest, SplitWordsEqualRobertaTokenizerFast) {
  int64_t cases = 0;
  for (const auto& [name, config] : Configs().items()) {
    const RobertaTokenizer tokenizer = Load(config.at("dir").get<std::string>());
    for (const json& c : config.at("words")) {
      const std::vector<std::string> words = c.at("words").get<std::vector<std::string>>();
      const int max_length = c.at("max_length").get<int>();
      const WordEncoding e = tokenizer.EncodeWords(words, max_length);
      ASSERT_EQ(e.input_ids, c.at("ids").get<std::vector<int32_t>>())
          << name << " max_length " << max_length << ", first word \""
          << (words.empty() ? "" : words[0]) << "\"";
      ASSERT_EQ(e.word_ids, c.at("word_ids").get<std::vector<int32_t>>())
          << name << " max_length " << max_length;
      ++cases;
    }
  }
  EXPECT_GT(cases, 500);
}

TEST(RobertaTokenizerTest, SpecialIdsAndOptionsComeFromTheDirectory) {
  const RobertaTokenizer tokenizer = Load(kPlainDir);
  EXPECT_EQ(tokenizer.bos_id(), 0);
  EXPECT_EQ(tokenizer.pad_id(), 1);
  EXPECT_EQ(tokenizer.eos_id(), 2);
  EXPECT_EQ(tokenizer.unk_id(), 3);
  EXPECT_EQ(tokenizer.mask_id(), 4);
  EXPECT_EQ(tokenizer.id_limit(), 3300);
  EXPECT_FALSE(tokenizer.options().add_prefix_space);
  EXPECT_TRUE(tokenizer.options().trim_offsets);
}

// A scratch copy of the plain test directory whose files the bad-input tests then spoil.
class BadDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    for (const char* file : {"vocab.json", "merges.txt", "tokenizer_config.json"}) {
      std::filesystem::copy_file(std::filesystem::path(kPlainDir) / file, dir_ / file);
    }
  }
  void Write(const char* file, const std::string& contents) {
    std::ofstream(dir_ / file, std::ios::binary | std::ios::trunc) << contents;
  }
  std::string Error() {
    absl::StatusOr<RobertaTokenizer> tokenizer = RobertaTokenizer::Load(dir_.string());
    EXPECT_FALSE(tokenizer.ok());
    return tokenizer.ok() ? "" : std::string(tokenizer.status().message());
  }
  std::string Path(const char* file) { return (dir_ / file).string(); }
  std::filesystem::path dir_;
};

TEST_F(BadDirectoryTest, MissingMergesIsNamed) {
  std::filesystem::remove(dir_ / "merges.txt");
  EXPECT_NE(Error().find(Path("merges.txt")), std::string::npos);
}

TEST_F(BadDirectoryTest, MissingVocabIsNamed) {
  std::filesystem::remove(dir_ / "vocab.json");
  EXPECT_NE(Error().find(Path("vocab.json")), std::string::npos);
}

TEST_F(BadDirectoryTest, MalformedMergesLineIsNamedWithItsNumber) {
  Write("merges.txt", "#version: 0.2\ne n\ne  r\n");
  const std::string error = Error();
  EXPECT_NE(error.find(Path("merges.txt") + " line 3"), std::string::npos) << error;
}

TEST_F(BadDirectoryTest, MergeOfUnknownTokenIsNamedWithItsLine) {
  Write("merges.txt", "e n\nqqq zzz\n");
  const std::string error = Error();
  EXPECT_NE(error.find(Path("merges.txt") + " line 2"), std::string::npos) << error;
  EXPECT_NE(error.find("qqq"), std::string::npos) << error;
}

TEST_F(BadDirectoryTest, VocabLackingMaskIsNamed) {
  Write("vocab.json", R"({"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3})");
  const std::string error = Error();
  EXPECT_NE(error.find(Path("vocab.json")), std::string::npos) << error;
  EXPECT_NE(error.find("<mask>"), std::string::npos) << error;
}

TEST_F(BadDirectoryTest, NonBooleanOptionIsNamed) {
  Write("tokenizer_config.json", R"({"add_prefix_space": "yes"})");
  const std::string error = Error();
  EXPECT_NE(error.find(Path("tokenizer_config.json")), std::string::npos) << error;
  EXPECT_NE(error.find("add_prefix_space"), std::string::npos) << error;
}

TEST_F(BadDirectoryTest, ConfigIsOptional) {
  std::filesystem::remove(dir_ / "tokenizer_config.json");
  absl::StatusOr<RobertaTokenizer> tokenizer = RobertaTokenizer::Load(dir_.string());
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_FALSE(tokenizer->options().add_prefix_space);
  EXPECT_TRUE(tokenizer->options().trim_offsets);
}

}  // namespace
}  // namespace xlmr::models::roberta
