// Question-answering windows per family, through the recipes' reader (recipes/qa_file.h, what
// xlmr_finetune and xlmr_predict run) and the batcher (data::Collate): for the tiny BERT of
// tests/golden/tiny_bert, the windows' ids and token types must be transformers' (BertTokenizerFast
// on the same questions and contexts: [CLS] question [SEP] context [SEP], the context and its
// [SEP] type 1). Exact: ids are integers, and a separator more or a type off is another input.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "framework/data/collate.h"
#include "framework/io/safetensors.h"
#include "gtest/gtest.h"
#include "models/model_tokenizer.h"
#include "models/encoder/config.h"
#include "recipes/qa_file.h"

namespace xlmr::recipes {
namespace {

constexpr char kBertQa[] = "tests/golden/tiny_bert/question_answering";

// Row b of an [B, S] I64 tensor of `file`, up to its attention mask's last 1.
std::vector<int32_t> GoldenRow(const io::SafetensorsFile& file, const std::string& name, int64_t b) {
  const io::SafetensorsTensor* values = file.Find(name);
  const io::SafetensorsTensor* mask = file.Find("attention_mask");
  EXPECT_TRUE(values != nullptr && mask != nullptr) << name;
  if (values == nullptr || mask == nullptr) return {};
  const int64_t length = values->shape[1];
  std::vector<int32_t> row;
  for (int64_t s = 0; s < length; ++s) {
    int64_t value = 0, real = 0;
    std::memcpy(&value, values->bytes.data() + 8 * (b * length + s), sizeof value);
    std::memcpy(&real, mask->bytes.data() + 8 * (b * length + s), sizeof real);
    if (real == 1) row.push_back(static_cast<int32_t>(value));
  }
  return row;
}

TEST(QaWindowsTest, BertWindowsAreTransformersIdsAndTokenTypes) {
  const std::string dir = kBertQa;
  absl::StatusOr<models::EncoderConfig> config = models::LoadEncoderConfig(dir + "/config.json");
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<models::ModelTokenizer> tokenizer = models::LoadModelTokenizer(dir, *config);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.status();
  QaFileOptions options;
  options.version_2_with_negative = true;
  options.features.max_seq_length = 40;  // every golden question fits one window
  options.features.doc_stride = 8;
  absl::StatusOr<QaFile> qa = ReadQaFile(dir + "/questions.jsonl", options, *tokenizer->tokenizer);
  ASSERT_TRUE(qa.ok()) << qa.status();
  absl::StatusOr<io::SafetensorsFile> golden = io::ReadSafetensors(dir + "/golden_fp32.safetensors");
  ASSERT_TRUE(golden.ok()) << golden.status();
  const int64_t rows = golden->Find("input_ids")->shape[0];
  ASSERT_EQ(static_cast<int64_t>(qa->windows.size()), rows);
  std::vector<int64_t> indices;
  for (int64_t b = 0; b < rows; ++b) indices.push_back(b);
  const data::Batch batch = data::Collate(qa->dataset, indices, static_cast<int32_t>(config->pad_token_id),
                                          tokenizer->tokenizer->segment_separator_id());
  ASSERT_TRUE(batch.token_type_ids.defined());
  const int64_t width = batch.input_ids.dim(1);
  for (int64_t b = 0; b < rows; ++b) {
    const std::vector<int32_t> ids = GoldenRow(*golden, "input_ids", b);
    EXPECT_EQ(qa->windows[b].input_ids, ids) << "question " << b;
    const std::vector<int32_t> types = GoldenRow(*golden, "token_type_ids", b);
    ASSERT_LE(static_cast<int64_t>(types.size()), width);
    const int32_t* ours = batch.token_type_ids.data<int32_t>() + b * width;
    EXPECT_EQ(std::vector<int32_t>(ours, ours + types.size()), types) << "question " << b;
  }
}

}  // namespace
}  // namespace xlmr::recipes
