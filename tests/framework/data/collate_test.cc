// Collate: right padding to the longest example, attention mask, labels and token count.
// CollatePacked: the same examples back to back, cu_seqlens, the longest length.
// Exact comparisons (integers).
#include "framework/data/collate.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace xlmr::data {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

constexpr int32_t kPad = 1;

// Examples of 3, 5 and 1 tokens with labels "b", "a", "b".
TokenizedDataset ThreeExamples() {
  TokenizedColumns columns;
  columns.offsets = {0, 3, 8, 9};
  columns.token_ids = {0, 10, 2, 0, 20, 21, 22, 2, 0};
  columns.lines = {2, 3, 4};
  columns.label_index = {1, 0, 1};
  columns.label_names = {"a", "b"};
  return TokenizedDataset::FromColumns("train.tsv", columns);
}

std::vector<int32_t> Values(const Tensor& tensor) {
  const int32_t* data = tensor.data<int32_t>();
  return std::vector<int32_t>(data, data + tensor.numel());
}

TEST(CollateTest, PadsRightToTheLongestExample) {
  TokenizedDataset dataset = ThreeExamples();
  absl::StatusOr<LabelMap> map = LabelMap::FromTrainingLabels({"a", "b"}, "train.tsv");
  ASSERT_TRUE(map.ok());
  ASSERT_TRUE(dataset.AssignLabelIds(*map).ok());

  const Batch batch = Collate(dataset, {2, 0, 1}, kPad);
  EXPECT_EQ(batch.input_ids.shape(), (Shape{3, 5}));
  EXPECT_EQ(batch.input_ids.dtype(), DType::kI32);
  EXPECT_EQ(batch.input_ids.device(), Device::kCpu);
  EXPECT_THAT(Values(batch.input_ids), ElementsAreArray({0, 1, 1, 1, 1,   //
                                                         0, 10, 2, 1, 1,  //
                                                         0, 20, 21, 22, 2}));
  EXPECT_EQ(batch.attention_mask.shape(), (Shape{3, 5}));
  EXPECT_THAT(Values(batch.attention_mask), ElementsAreArray({1, 0, 0, 0, 0,  //
                                                              1, 1, 1, 0, 0,  //
                                                              1, 1, 1, 1, 1}));
  EXPECT_EQ(batch.labels.shape(), (Shape{3}));
  EXPECT_THAT(Values(batch.labels), ElementsAre(1, 1, 0));
  EXPECT_EQ(batch.tokens, 9);
}

TEST(CollateTest, BatchOfShortExamplesIsOnlyAsWideAsItsLongest) {
  const Batch batch = Collate(ThreeExamples(), {0, 0}, kPad);  // repeats allowed
  EXPECT_EQ(batch.input_ids.shape(), (Shape{2, 3}));
  EXPECT_THAT(Values(batch.input_ids), ElementsAre(0, 10, 2, 0, 10, 2));
  EXPECT_EQ(batch.tokens, 6);
}

TEST(CollateTest, EmptyIndexListGivesAnEmptyBatch) {
  const Batch batch = Collate(ThreeExamples(), {}, kPad);
  EXPECT_EQ(batch.input_ids.shape(), (Shape{0, 0}));
  EXPECT_EQ(batch.attention_mask.shape(), (Shape{0, 0}));
  EXPECT_EQ(batch.tokens, 0);
}

TEST(CollateTest, NoLabelsWithoutLabelIds) {
  const Batch batch = Collate(ThreeExamples(), {1}, kPad);
  EXPECT_FALSE(batch.labels.defined());
  EXPECT_EQ(batch.tokens, 5);
}

// Token-level data: per-token label ids [B, S], -100 wherever no label counts (specials,
// later sub-tokens, padding), and loss_terms = the labels that count.
TEST(CollateTest, PerTokenLabelsArePaddedWithTheIgnoredLabel) {
  TokenizedColumns columns;
  columns.offsets = {0, 4, 6};
  columns.token_ids = {0, 10, 11, 2, 0, 2};
  columns.lines = {1, 4};
  columns.label_index = {-1, -1};
  columns.label_names = {"B-X", "O"};
  columns.token_label_index = {-1, 1, -1, -1, -1, -1};  // word 0 starts at token 1 (2 pieces)
  columns.word_index = {-1, 0, -1, -1, -1, -1};
  TokenizedDataset dataset = TokenizedDataset::FromColumns("train.conll", columns);
  absl::StatusOr<LabelMap> map = LabelMap::FromId2Label({"B-X", "O"}, "train.conll");
  ASSERT_TRUE(map.ok());
  ASSERT_TRUE(dataset.AssignTokenLabelIds(*map).ok());

  const Batch batch = Collate(dataset, {1, 0}, kPad);
  EXPECT_EQ(batch.labels.shape(), (Shape{2, 4}));
  EXPECT_THAT(Values(batch.labels), ElementsAre(-100, -100, -100, -100,  //
                                                -100, 1, -100, -100));
  EXPECT_EQ(batch.loss_terms, 1);
  EXPECT_EQ(batch.tokens, 6);
}

TEST(CollatePackedTest, SameExamplesInOrderWithoutPadding) {
  TokenizedDataset dataset = ThreeExamples();
  absl::StatusOr<LabelMap> map = LabelMap::FromTrainingLabels({"a", "b"}, "train.tsv");
  ASSERT_TRUE(map.ok());
  ASSERT_TRUE(dataset.AssignLabelIds(*map).ok());

  const Batch batch = CollatePacked(dataset, {2, 0, 1});
  ASSERT_TRUE(batch.packed());
  EXPECT_EQ(batch.input_ids.shape(), (Shape{9}));
  EXPECT_THAT(Values(batch.input_ids), ElementsAre(0, 0, 10, 2, 0, 20, 21, 22, 2));
  EXPECT_FALSE(batch.attention_mask.defined());
  EXPECT_EQ(batch.cu_seqlens.shape(), (Shape{4}));
  EXPECT_THAT(Values(batch.cu_seqlens), ElementsAre(0, 1, 4, 9));  // ends at T
  EXPECT_EQ(batch.max_seqlen, 5);
  EXPECT_EQ(batch.examples(), 3);
  EXPECT_THAT(Values(batch.labels), ElementsAre(1, 1, 0));
  EXPECT_EQ(batch.tokens, 9);
  EXPECT_EQ(batch.loss_terms, 3);
}

TEST(CollatePackedTest, EmptyIndexListGivesNoTokens) {
  const Batch batch = CollatePacked(ThreeExamples(), {});
  EXPECT_EQ(batch.input_ids.shape(), (Shape{0}));
  EXPECT_THAT(Values(batch.cu_seqlens), ElementsAre(0));
  EXPECT_EQ(batch.examples(), 0);
  EXPECT_EQ(batch.tokens, 0);
}

// Per-token labels [T], in token order, -100 where no label counts: Collate's rows without
// their padding.
TEST(CollatePackedTest, PerTokenLabelsFollowTheTokens) {
  TokenizedColumns columns;
  columns.offsets = {0, 4, 6};
  columns.token_ids = {0, 10, 11, 2, 0, 2};
  columns.lines = {1, 4};
  columns.label_index = {-1, -1};
  columns.label_names = {"B-X", "O"};
  columns.token_label_index = {-1, 1, -1, -1, -1, -1};
  columns.word_index = {-1, 0, -1, -1, -1, -1};
  TokenizedDataset dataset = TokenizedDataset::FromColumns("train.conll", columns);
  absl::StatusOr<LabelMap> map = LabelMap::FromId2Label({"B-X", "O"}, "train.conll");
  ASSERT_TRUE(map.ok());
  ASSERT_TRUE(dataset.AssignTokenLabelIds(*map).ok());

  const Batch batch = CollatePacked(dataset, {1, 0});
  EXPECT_THAT(Values(batch.cu_seqlens), ElementsAre(0, 2, 6));
  EXPECT_EQ(batch.labels.shape(), (Shape{6}));
  EXPECT_THAT(Values(batch.labels), ElementsAre(-100, -100, -100, 1, -100, -100));
  EXPECT_EQ(batch.loss_terms, 1);
}

TEST(CollateTest, RegressionTargetsAreFloats) {
  TokenizedColumns columns;
  columns.offsets = {0, 2, 4};
  columns.token_ids = {0, 2, 0, 2};
  columns.lines = {2, 3};
  columns.label_index = {1, 0};
  columns.label_names = {"-0.5", "3.25"};
  TokenizedDataset dataset = TokenizedDataset::FromColumns("train.tsv", columns);
  ASSERT_TRUE(dataset.AssignRegressionTargets().ok());
  const Batch batch = Collate(dataset, {0, 1}, kPad);
  EXPECT_EQ(batch.labels.dtype(), DType::kF32);
  EXPECT_EQ(batch.labels.ToFloatVector(), (std::vector<float>{3.25f, -0.5f}));
  EXPECT_EQ(batch.loss_terms, 2);
}

TEST(CollateTest, AnswerSpansAreStartRowThenEndRow) {
  TokenizedDataset dataset = ThreeExamples();
  dataset.AssignSpanLabels({1, 3, 0}, {2, 4, 0});
  const Batch batch = Collate(dataset, {1, 2, 0}, kPad);
  EXPECT_EQ(batch.labels.shape(), (Shape{2, 3}));
  EXPECT_THAT(Values(batch.labels), ElementsAre(3, 0, 1, 4, 0, 2));
  EXPECT_EQ(batch.loss_terms, 6);  // a start and an end per example
}

TEST(CollateTest, RegressionLabelThatIsNotANumberNamesFileAndLine) {
  TokenizedColumns columns;
  columns.offsets = {0, 2};
  columns.token_ids = {0, 2};
  columns.lines = {7};
  columns.label_index = {0};
  columns.label_names = {"high"};
  TokenizedDataset dataset = TokenizedDataset::FromColumns("train.tsv", columns);
  const absl::Status status = dataset.AssignRegressionTargets();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), ::testing::HasSubstr("train.tsv:7: label 'high'"));
}

}  // namespace
}  // namespace xlmr::data
