#include "framework/data/qa_dataset.h"

#include <vector>

#include "framework/data/collate.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace xlmr::data {
namespace {

using ::testing::ElementsAre;

QaFeature Window(int64_t example, std::vector<int32_t> ids, int32_t start, int32_t end) {
  QaFeature feature;
  feature.example_index = example;
  feature.input_ids = std::move(ids);
  feature.start_position = start;
  feature.end_position = end;
  return feature;
}

TEST(QaDatasetTest, OneExamplePerWindowWithItsSpanAndLine) {
  std::vector<QaExample> examples(2);
  examples[0].line = 4;
  examples[1].line = 9;
  const std::vector<QaFeature> features = {Window(0, {0, 10, 2, 2, 20, 21, 2}, 4, 5),
                                           Window(0, {0, 10, 2, 2, 22, 2}, 0, 0),
                                           Window(1, {0, 11, 2, 2, 23, 24, 25, 2}, 6, 6)};
  const TokenizedDataset dataset = MakeQaDataset("train.jsonl", examples, features);
  ASSERT_EQ(dataset.size(), 3);
  EXPECT_THAT(dataset.example(1), ElementsAre(0, 10, 2, 2, 22, 2));
  EXPECT_EQ(dataset.line(2), 9);
  EXPECT_EQ(dataset.span_start(0), 4);
  EXPECT_EQ(dataset.span_end(0), 5);
  EXPECT_EQ(dataset.span_start(1), 0);
  EXPECT_FALSE(dataset.has_label_ids());
  const Batch batch = Collate(dataset, {0, 2}, /*pad_id=*/1);
  const int32_t* labels = batch.labels.data<int32_t>();
  EXPECT_THAT(std::vector<int32_t>(labels, labels + 4), ElementsAre(4, 6, 5, 6));
  EXPECT_EQ(batch.loss_terms, 4);
}

TEST(QaDatasetDeathTest, ASpanOutsideItsWindowIsABug) {
  std::vector<QaExample> examples(1);
  EXPECT_DEATH(MakeQaDataset("f", examples, {Window(0, {0, 2, 2, 7, 2}, 5, 5)}),
               "outside its 5 tokens");
}

}  // namespace
}  // namespace xlmr::data
