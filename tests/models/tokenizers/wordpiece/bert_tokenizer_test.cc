// BertTokenizer against transformers' BertTokenizerFast, and its errors on bad directories.
//
// Golden data: tests/models/tokenizers/wordpiece/testdata/make_bert_tokenizer_testdata.py trained two small
// WordPiece vocabularies on the repo's own text and recorded, for four settings (uncased: lower
// case and accents stripped; cased: neither; lower_keep_accents: lower case with strip_accents
// false; strip_accents_no_chinese: accents stripped, case kept, CJK not split), what
// BertTokenizerFast.from_pretrained(dir) returns for thousands of texts (langid dev/test rows in
// 20 languages plus hand-written CJK, accents, emoji, control characters, punctuation, long
// words), text pairs cut at several max_length values, and pre-split sentences.
//
// Tolerance: none. Ids, token types, word ids and offsets are integers; an encoding either is
// HF's or it is a bug (a different id changes the model's input).
#include "models/tokenizers/wordpiece/bert_tokenizer.h"

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "models/tokenizers/wordpiece/wordpiece.h"
#include "nlohmann/json.hpp"

namespace xlmr::models {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// Runfiles-relative: Bazel runs tests in the main workspace's runfiles root.
const char kTestdata[] = "tests/models/tokenizers/wordpiece/testdata";
// How many mismatches of one kind are printed before the count.
constexpr int kShownMismatches = 5;

BertTokenizer LoadTokenizer(const std::string& directory) {
  absl::StatusOr<BertTokenizer> tokenizer = BertTokenizer::Load(directory);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status();
  return std::move(tokenizer).value();
}

json ReadGolden(const std::string& directory) {
  std::ifstream file(directory + "/golden.json");
  EXPECT_TRUE(file.good()) << directory;
  return json::parse(file);
}

std::vector<TokenSpan> SpansOf(const json& flat) {
  std::vector<TokenSpan> spans;
  for (size_t i = 0; i + 1 < flat.size(); i += 2) {
    spans.push_back({flat[i].get<int64_t>(), flat[i + 1].get<int64_t>()});
  }
  return spans;
}

std::string Show(const std::vector<TokenSpan>& spans) {
  std::string out;
  for (const TokenSpan& s : spans) {
    out += "[" + std::to_string(s.begin) + "," + std::to_string(s.end) + ")";
  }
  return out;
}

// Counts the rows where `matches` fails, printing the first few.
class MismatchLog {
 public:
  void Record(bool ok, const std::string& what) {
    ++rows_;
    if (ok) return;
    if (++mismatches_ <= kShownMismatches) ADD_FAILURE() << what;
  }
  void Expect(const std::string& kind, int minimum_rows) const {
    EXPECT_EQ(mismatches_, 0) << mismatches_ << " of " << rows_ << " " << kind << " differ";
    EXPECT_GE(rows_, minimum_rows) << "too few golden " << kind;
  }

 private:
  int rows_ = 0;
  int mismatches_ = 0;
};

class GoldenTest : public ::testing::TestWithParam<const char*> {
 protected:
  std::string Directory() const { return std::string(kTestdata) + "/" + GetParam(); }
};

TEST_P(GoldenTest, TextIdsAndOffsetsEqualHuggingFace) {
  const BertTokenizer tokenizer = LoadTokenizer(Directory());
  const json golden = ReadGolden(Directory());
  MismatchLog log;
  for (const json& row : golden.at("texts")) {
    const std::string text = row.at("text").get<std::string>();
    const std::vector<int32_t> expected_ids = row.at("ids").get<std::vector<int32_t>>();
    const std::vector<TokenSpan> expected_spans = SpansOf(row.at("offsets"));
    std::vector<TokenSpan> spans;
    const std::vector<int32_t> ids = tokenizer.EncodeTextWithOffsets(text, &spans);
    bool same_spans = spans.size() == expected_spans.size();
    for (size_t i = 0; same_spans && i < spans.size(); ++i) {
      same_spans =
          spans[i].begin == expected_spans[i].begin && spans[i].end == expected_spans[i].end;
    }
    log.Record(ids == expected_ids && same_spans && tokenizer.EncodeText(text) == ids,
               "text " + json(text).dump() + "\n  expected ids " + row.at("ids").dump() +
                   " spans " + Show(expected_spans) + "\n  got      ids " + json(ids).dump() +
                   " spans " + Show(spans));
  }
  log.Expect("texts", 500);
}

TEST_P(GoldenTest, PairsWithTokenTypesAndTruncationEqualHuggingFace) {
  const BertTokenizer tokenizer = LoadTokenizer(Directory());
  const json golden = ReadGolden(Directory());
  MismatchLog log;
  for (const json& row : golden.at("pairs")) {
    const std::string a = row.at("a").get<std::string>();
    std::optional<std::string> b;
    if (row.contains("b")) b = row.at("b").get<std::string>();
    const BertEncoding e = tokenizer.EncodeWithTokenTypes(
        a, b.has_value() ? std::optional<absl::string_view>(*b) : std::nullopt,
        row.at("max_length").get<int>());
    const std::vector<int32_t> ones(e.input_ids.size(), 1);
    log.Record(e.input_ids == row.at("input_ids").get<std::vector<int32_t>>() &&
                   e.token_type_ids == row.at("token_type_ids").get<std::vector<int32_t>>() &&
                   e.attention_mask == ones,
               "pair " + row.dump().substr(0, 300) + "\n  got ids " + json(e.input_ids).dump() +
                   " types " + json(e.token_type_ids).dump());
  }
  log.Expect("pairs", 50);
}

TEST_P(GoldenTest, SplitWordsWithWordIdsEqualHuggingFace) {
  const BertTokenizer tokenizer = LoadTokenizer(Directory());
  const json golden = ReadGolden(Directory());
  MismatchLog log;
  for (const json& row : golden.at("words")) {
    const WordEncoding e = tokenizer.EncodeWords(row.at("words").get<std::vector<std::string>>(),
                                                 row.at("max_length").get<int>());
    log.Record(e.input_ids == row.at("input_ids").get<std::vector<int32_t>>() &&
                   e.word_ids == row.at("word_ids").get<std::vector<int32_t>>(),
               "words " + row.dump().substr(0, 300) + "\n  got ids " + json(e.input_ids).dump() +
                   " word_ids " + json(e.word_ids).dump());
  }
  log.Expect("sentences", 25);
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, GoldenTest,
                         ::testing::Values("uncased", "cased", "lower_keep_accents",
                                           "strip_accents_no_chinese"));

// The uncased vocabulary's config leaves strip_accents null: accents go with the lower case.
TEST(BertTokenizerTest, StripAccentsFollowsLowerCaseWhenUnset) {
  const BertTokenizer uncased = LoadTokenizer(std::string(kTestdata) + "/uncased");
  EXPECT_EQ(uncased.EncodeText("CAFÉ"), uncased.EncodeText("cafe"));
  const BertTokenizer keep = LoadTokenizer(std::string(kTestdata) + "/lower_keep_accents");
  EXPECT_NE(keep.EncodeText("CAFÉ"), keep.EncodeText("cafe"));
}

TEST(BertTokenizerTest, PairTokenTypesAndSpecialIds) {
  const BertTokenizer tokenizer = LoadTokenizer(std::string(kTestdata) + "/uncased");
  const BertEncoding e = tokenizer.EncodeWithTokenTypes("a", std::string("b"), 512);
  ASSERT_EQ(e.input_ids.size(), 5u);
  EXPECT_EQ(e.input_ids[0], tokenizer.cls_id());
  EXPECT_EQ(e.input_ids[2], tokenizer.sep_id());
  EXPECT_EQ(e.input_ids[4], tokenizer.sep_id());
  EXPECT_EQ(e.token_type_ids, (std::vector<int32_t>{0, 0, 0, 1, 1}));
}

// WordPiece on its own: greedy longest match, "##" continuations, [UNK] for the whole word.
TEST(WordPieceTest, GreedyLongestMatchWithContinuations) {
  const bert::WordPiece wordpiece({{"[UNK]", 0}, {"un", 1}, {"##aff", 2}, {"##able", 3},
                                   {"u", 4}, {"##n", 5}, {"##a", 6}},
                                  0);
  std::vector<bert::WordPieceToken> pieces;
  wordpiece.Tokenize("unaffable", &pieces);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(pieces[0].id, 1);
  EXPECT_EQ(pieces[1].id, 2);
  EXPECT_EQ(pieces[2].id, 3);
  EXPECT_EQ(pieces[2].begin, 5);
  EXPECT_EQ(pieces[2].end, 9);
  pieces.clear();
  wordpiece.Tokenize("unx", &pieces);  // "##x" is not in the vocabulary: the word is [UNK]
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].id, 0);
  EXPECT_EQ(pieces[0].end, 3);
  pieces.clear();
  wordpiece.Tokenize(std::string(101, 'u'), &pieces);  // over 100 characters
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0].id, 0);
}

// Bad directories: every error names the file (and the token) to fix.
class BadDirectoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void Write(const std::string& name, const std::string& content) {
    std::ofstream(dir_ / name) << content;
  }
  std::string Error() {
    absl::StatusOr<BertTokenizer> tokenizer = BertTokenizer::Load(dir_.string());
    EXPECT_FALSE(tokenizer.ok());
    return tokenizer.ok() ? "" : std::string(tokenizer.status().message());
  }
  std::filesystem::path dir_;
};

TEST_F(BadDirectoryTest, MissingVocabIsNamed) {
  EXPECT_THAT(Error(), HasSubstr((dir_ / "vocab.txt").string()));
}

TEST_F(BadDirectoryTest, VocabWithoutASpecialTokenNamesFileAndToken) {
  Write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n");
  const std::string error = Error();
  EXPECT_THAT(error, HasSubstr((dir_ / "vocab.txt").string()));
  EXPECT_THAT(error, HasSubstr("[MASK]"));
}

TEST_F(BadDirectoryTest, RenamedSpecialTokenMissingFromVocabIsNamed) {
  Write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");
  Write("tokenizer_config.json", R"({"cls_token": {"content": "<cls>"}})");
  EXPECT_THAT(Error(), HasSubstr("<cls>"));
}

TEST_F(BadDirectoryTest, MalformedConfigIsNamed) {
  Write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");
  Write("tokenizer_config.json", "{\"do_lower_case\": ");
  EXPECT_THAT(Error(), HasSubstr((dir_ / "tokenizer_config.json").string()));
}

TEST_F(BadDirectoryTest, WronglyTypedConfigKeyIsNamed) {
  Write("vocab.txt", "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");
  Write("tokenizer_config.json", R"({"strip_accents": "yes"})");
  const std::string error = Error();
  EXPECT_THAT(error, HasSubstr("tokenizer_config.json"));
  EXPECT_THAT(error, HasSubstr("strip_accents"));
}

// vocab.txt is read as Python's readlines() reads it: "\r\n" and "\r" end lines too.
TEST_F(BadDirectoryTest, VocabLineEndingsAsPython) {
  Write("vocab.txt", "[PAD]\r\n[UNK]\r[CLS]\n[SEP]\n[MASK]\nhello");
  absl::StatusOr<BertTokenizer> tokenizer = BertTokenizer::Load(dir_.string());
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  EXPECT_EQ(tokenizer->unk_id(), 1);
  EXPECT_EQ(tokenizer->cls_id(), 2);
  EXPECT_EQ(tokenizer->vocab_size(), 6);
  EXPECT_EQ(tokenizer->EncodeText("hello"), (std::vector<int32_t>{5}));
}

}  // namespace
}  // namespace xlmr::models
