// LabelMap: id order of the training labels, and mapping labels of other files to ids.
#include "framework/data/label_map.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace xlmr::data {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Id2LabelOf(const std::vector<std::string>& labels) {
  absl::StatusOr<LabelMap> map = LabelMap::FromTrainingLabels(labels, "train.tsv");
  EXPECT_TRUE(map.ok()) << map.status();
  return map.ok() ? map->id2label() : std::vector<std::string>();
}

Record RecordWithLabel(std::string label, int64_t line) {
  Record record;
  record.text = "x";
  record.label = std::move(label);
  record.line = line;
  return record;
}

TEST(LabelMapTest, StringLabelsSortByBytesLikePythonSorted) {
  EXPECT_THAT(Id2LabelOf({"pos", "neg", "neutral", "neg"}), ElementsAre("neg", "neutral", "pos"));
  // Code point order: 'Z' (U+005A) < 'a' (U+0061) < 'é' (U+00E9, bytes C3 A9).
  EXPECT_THAT(Id2LabelOf({"\xC3\xA9t\xC3\xA9", "alpha", "Zulu"}),
              ElementsAre("Zulu", "alpha", "\xC3\xA9t\xC3\xA9"));
}

TEST(LabelMapTest, IntegerLabelsSortNumerically) {
  EXPECT_THAT(Id2LabelOf({"10", "2", "1", "0", "2"}), ElementsAre("0", "1", "2", "10"));
  EXPECT_THAT(Id2LabelOf({"-1", "1", "0"}), ElementsAre("-1", "0", "1"));
  // One non-integer (or non-canonical "01") label makes them all strings.
  EXPECT_THAT(Id2LabelOf({"10", "2", "x"}), ElementsAre("10", "2", "x"));
  EXPECT_THAT(Id2LabelOf({"10", "2", "01"}), ElementsAre("01", "10", "2"));
}

TEST(LabelMapTest, FindsIdsAndLabels) {
  absl::StatusOr<LabelMap> map = LabelMap::FromTrainingLabels({"pos", "neg"}, "train.tsv");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->num_labels(), 2);
  EXPECT_EQ(map->Find("neg"), 0);
  EXPECT_EQ(map->Find("pos"), 1);
  EXPECT_EQ(map->Find("neutral"), std::nullopt);
  EXPECT_EQ(map->label(1), "pos");
}

TEST(LabelMapTest, TrainingLabelErrors) {
  absl::StatusOr<LabelMap> single = LabelMap::FromTrainingLabels({"pos", "pos"}, "train.tsv");
  ASSERT_FALSE(single.ok());
  EXPECT_EQ(single.status().message(),
            "train.tsv: every row has the label 'pos'; classification needs at least two "
            "distinct labels (check --label_column)");
  EXPECT_FALSE(LabelMap::FromTrainingLabels({}, "train.tsv").ok());
  EXPECT_FALSE(LabelMap::FromTrainingLabels({"a", ""}, "train.tsv").ok());

  absl::StatusOr<LabelMap> unlabelled =
      LabelMap::FromTrainingRecords({RecordWithLabel("a", 2), RecordWithLabel("", 3)}, "t.tsv");
  ASSERT_FALSE(unlabelled.ok());
  EXPECT_EQ(unlabelled.status().message(), "t.tsv:3: missing label (--label_column)");
}

TEST(LabelMapTest, FromId2LabelKeepsTheGivenOrderAndRejectsRepeats) {
  absl::StatusOr<LabelMap> map = LabelMap::FromId2Label({"pos", "neg"}, "config.json");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(map->Find("pos"), 0);
  absl::StatusOr<LabelMap> repeated = LabelMap::FromId2Label({"a", "a"}, "config.json");
  ASSERT_FALSE(repeated.ok());
  EXPECT_EQ(repeated.status().message(),
            "config.json: id2label must hold distinct, non-empty labels, got [a, a]");
}

TEST(MapLabelsTest, MapsRecordsInOrder) {
  absl::StatusOr<LabelMap> map = LabelMap::FromTrainingLabels({"b", "a", "c"}, "train.tsv");
  ASSERT_TRUE(map.ok()) << map.status();
  absl::StatusOr<std::vector<int32_t>> ids = MapLabels(
      {RecordWithLabel("c", 2), RecordWithLabel("a", 3), RecordWithLabel("c", 4)}, *map, "dev.tsv");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_THAT(*ids, ElementsAre(2, 0, 2));
}

TEST(MapLabelsTest, UnknownAndMissingLabelsNameFileLineAndKnownLabels) {
  absl::StatusOr<LabelMap> map = LabelMap::FromTrainingLabels({"pos", "neg"}, "train.tsv");
  ASSERT_TRUE(map.ok()) << map.status();
  absl::StatusOr<std::vector<int32_t>> unknown =
      MapLabels({RecordWithLabel("pos", 2), RecordWithLabel("maybe", 7)}, *map, "dev.tsv");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "dev.tsv:7: label 'maybe' does not occur in the training data (known labels: neg, "
            "pos); check --label_column");
  absl::StatusOr<std::vector<int32_t>> missing =
      MapLabels({RecordWithLabel("", 4)}, *map, "dev.tsv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "dev.tsv:4: missing label (--label_column)");
}

TEST(MapLabelsTest, LongLabelListsAreShortened) {
  std::vector<std::string> many;
  for (int i = 0; i < 25; ++i) many.push_back("l" + std::to_string(100 + i));
  absl::StatusOr<LabelMap> map = LabelMap::FromTrainingLabels(many, "train.tsv");
  ASSERT_TRUE(map.ok()) << map.status();
  const std::string message(map->UnknownLabelError("dev.tsv", 2, "zzz").message());
  EXPECT_NE(message.find("l119, ... (25 in all)"), std::string::npos) << message;
  EXPECT_EQ(message.find("l120"), std::string::npos) << message;
}

}  // namespace
}  // namespace xlmr::data
