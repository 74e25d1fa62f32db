// models/model_tokenizer.h: the family's tokenizer from a model directory, and the checks that
// tie it to the config (vocab_size, pad_token_id).
#include "models/model_tokenizer.h"

#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace xlmr::models {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The tiny RoBERTa of tests/golden/make_tiny_roberta.py (vocab 3300, <pad> 1).
constexpr char kRobertaDir[] = "tests/golden/tiny_roberta/model";
// The embedded default's XLM-R directory (sentencepiece.bpe.model).
constexpr char kXlmrDir[] = "recipes/data/langid";
// The tiny CamemBERT of tests/golden/make_tiny_camembert.py (2000 pieces, vocab 2005, <pad> 1,
// <s> 5, </s> 6).
constexpr char kCamembertDir[] = "tests/golden/tiny_camembert/model";

EncoderConfig ConfigOf(const std::string& directory) {
  absl::StatusOr<EncoderConfig> config = LoadEncoderConfig(directory + "/config.json");
  EXPECT_TRUE(config.ok()) << config.status();
  return *config;
}

TEST(ModelTokenizerTest, RobertaDirectoryGivesTheByteLevelTokenizerAndItsFiles) {
  const EncoderConfig config = ConfigOf(kRobertaDir);
  ASSERT_STREQ(config.family->model_type, "roberta");
  absl::StatusOr<ModelTokenizer> loaded = LoadModelTokenizer(kRobertaDir, config);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->files, ElementsAre("vocab.json", "merges.txt", "tokenizer_config.json"));
  // RobertaTokenizerFast("Hello world") in transformers: <s> ... </s> with the ids of the BPE
  // test vocabulary; here only what the interface promises.
  const Encoding encoding = loaded->tokenizer->Encode("Hello world", std::nullopt, 128);
  ASSERT_GE(encoding.input_ids.size(), 3u);
  EXPECT_EQ(encoding.input_ids.front(), loaded->tokenizer->bos_id());
  EXPECT_EQ(encoding.input_ids.back(), loaded->tokenizer->eos_id());
  EXPECT_EQ(loaded->tokenizer->special_tokens_pair(), 4);
}

TEST(ModelTokenizerTest, XlmrDirectoryGivesSentencePiece) {
  absl::StatusOr<ModelTokenizer> loaded = LoadModelTokenizer(kXlmrDir, ConfigOf(kXlmrDir));
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->files, ElementsAre("sentencepiece.bpe.model"));
  EXPECT_EQ(loaded->tokenizer->pad_id(), 1);
}

// The same file name as XLM-R's, read with CamemBERT's id mapping because config.json says
// camembert: <s> and </s> are the model's own pieces (5, 6), not XLM-R's 0 and 2.
TEST(ModelTokenizerTest, CamembertDirectoryGivesSentencePieceWithCamembertIds) {
  const EncoderConfig config = ConfigOf(kCamembertDir);
  ASSERT_STREQ(config.family->model_type, "camembert");
  absl::StatusOr<ModelTokenizer> loaded = LoadModelTokenizer(kCamembertDir, config);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_THAT(loaded->files, ElementsAre("sentencepiece.bpe.model"));
  EXPECT_EQ(loaded->tokenizer->bos_id(), 5);
  EXPECT_EQ(loaded->tokenizer->eos_id(), 6);
  EXPECT_EQ(loaded->tokenizer->pad_id(), 1);
  EXPECT_EQ(loaded->tokenizer->bos_id(), config.bos_token_id);
  EXPECT_EQ(loaded->tokenizer->eos_id(), config.eos_token_id);
  const Encoding pair = loaded->tokenizer->Encode("a", absl::string_view("b"), 128);
  ASSERT_GE(pair.input_ids.size(), 6u);
  EXPECT_EQ(pair.input_ids.front(), 5);
  EXPECT_EQ(pair.input_ids.back(), 6);
}

// 2000 pieces need 2005 rows with CamemBERT's mapping (2002 would do for XLM-R's).
TEST(ModelTokenizerTest, CamembertIdsBeyondTheEmbeddingTableAreRefused) {
  EncoderConfig config = ConfigOf(kCamembertDir);
  config.vocab_size = 2004;
  const absl::Status status = LoadModelTokenizer(kCamembertDir, config).status();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("2000 pieces need vocab_size >= 2005"));
}

TEST(ModelTokenizerTest, IdsBeyondTheEmbeddingTableAreRefused) {
  EncoderConfig config = ConfigOf(kRobertaDir);
  config.vocab_size = 3000;
  const absl::Status status = LoadModelTokenizer(kRobertaDir, config).status();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("vocab.json: has ids up to 3299, config.json's vocab_size is 3000"));
}

TEST(ModelTokenizerTest, PadOtherThanTheConfigsIsRefused) {
  EncoderConfig config = ConfigOf(kRobertaDir);
  config.pad_token_id = 0;
  const absl::Status status = LoadModelTokenizer(kRobertaDir, config).status();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("config.json: pad_token_id is 0, the tokenizer's <pad> is 1"));
}

TEST(ModelTokenizerTest, MissingRequiredFileIsNamed) {
  const std::string dir = ::testing::TempDir() + "/no_merges";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(std::string(kRobertaDir) + "/vocab.json", dir + "/vocab.json",
                             std::filesystem::copy_options::overwrite_existing);
  const absl::Status status = LoadModelTokenizer(dir, ConfigOf(kRobertaDir)).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("no_merges/merges.txt: missing; a roberta model directory needs"));
}

}  // namespace
}  // namespace xlmr::models
