// TokenizedDataset: example views and label id assignment (owned columns; the mapped form is
// covered by token_cache_test.cc).
#include "framework/data/tokenized_dataset.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace xlmr::data {
namespace {

using ::testing::ElementsAre;

// Three examples: [0 5 2] "pos" (line 2), [0 2] no label (line 3), [0 6 7 2] "neg" (line 5).
TokenizedColumns ThreeExamples() {
  TokenizedColumns columns;
  columns.offsets = {0, 3, 5, 9};
  columns.token_ids = {0, 5, 2, 0, 2, 0, 6, 7, 2};
  columns.lines = {2, 3, 5};
  columns.label_index = {1, -1, 0};
  columns.label_names = {"neg", "pos"};
  return columns;
}

TEST(TokenizedDatasetTest, ExposesExamplesLinesAndLabelNames) {
  const TokenizedDataset dataset = TokenizedDataset::FromColumns("dev.tsv", ThreeExamples());
  EXPECT_EQ(dataset.file(), "dev.tsv");
  ASSERT_EQ(dataset.size(), 3);
  EXPECT_THAT(dataset.example(0), ElementsAre(0, 5, 2));
  EXPECT_THAT(dataset.example(1), ElementsAre(0, 2));
  EXPECT_THAT(dataset.example(2), ElementsAre(0, 6, 7, 2));
  EXPECT_EQ(dataset.num_tokens(2), 4);
  EXPECT_EQ(dataset.total_tokens(), 9);
  EXPECT_EQ(dataset.line(2), 5);
  EXPECT_EQ(dataset.label_name(0), "pos");
  EXPECT_EQ(dataset.label_name(1), std::nullopt);
  EXPECT_THAT(dataset.label_names(), ElementsAre("neg", "pos"));
  EXPECT_FALSE(dataset.has_label_ids());
}

TEST(TokenizedDatasetTest, AssignsIdsThroughTheLabelMap) {
  TokenizedColumns columns = ThreeExamples();
  columns.label_index = {1, 0, 0};
  TokenizedDataset dataset = TokenizedDataset::FromColumns("dev.tsv", columns);
  // The training map's order, not this file's: "pos" is id 0 here.
  absl::StatusOr<LabelMap> map = LabelMap::FromId2Label({"pos", "neg"}, "config.json");
  ASSERT_TRUE(map.ok()) << map.status();
  ASSERT_TRUE(dataset.AssignLabelIds(*map).ok());
  EXPECT_TRUE(dataset.has_label_ids());
  EXPECT_EQ(dataset.label(0), 0);
  EXPECT_EQ(dataset.label(1), 1);
  EXPECT_EQ(dataset.label(2), 1);
}

TEST(TokenizedDatasetTest, AssignLabelIdsReportsTheFirstBadLine) {
  TokenizedDataset unlabelled = TokenizedDataset::FromColumns("dev.tsv", ThreeExamples());
  absl::StatusOr<LabelMap> map = LabelMap::FromTrainingLabels({"neg", "pos"}, "train.tsv");
  ASSERT_TRUE(map.ok()) << map.status();
  absl::Status missing = unlabelled.AssignLabelIds(*map);
  EXPECT_EQ(missing.message(), "dev.tsv:3: missing label (--label_column)");
  EXPECT_FALSE(unlabelled.has_label_ids());

  TokenizedColumns columns = ThreeExamples();
  columns.label_index = {1, 0, 1};
  columns.label_names = {"neutral", "pos"};
  TokenizedDataset unknown = TokenizedDataset::FromColumns("dev.tsv", columns);
  EXPECT_EQ(unknown.AssignLabelIds(*map).message(),
            "dev.tsv:3: label 'neutral' does not occur in the training data (known labels: neg, "
            "pos); check --label_column");
}

}  // namespace
}  // namespace xlmr::data
