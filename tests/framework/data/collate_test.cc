// Collate: right padding to the longest example, attention mask, labels and token count.
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

}  // namespace
}  // namespace xlmr::data
