// Entity-level scores against seqeval 1.2.2 (testdata/make_metric_cases.py): hand-written cases
// covering every chunking rule plus random ones. Tolerance 0: the counts are integers and the
// scores are the same double operations as seqeval's (tp / pred, tp / true,
// 2 * p * r / (p + r)), so any difference is a wrong entity, not rounding.
#include "framework/train/sequence_labeling_metrics.h"

#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {
namespace {

using nlohmann::json;
using Sentences = std::vector<std::vector<std::string>>;

json ReadCases() {
  std::ifstream file("tests/framework/train/testdata/seqeval_cases.json");
  EXPECT_TRUE(file.good());
  return json::parse(file).at("cases");
}

TEST(SequenceLabelingMetricsTest, MatchesSeqevalOnEveryCase) {
  const json cases = ReadCases();
  ASSERT_EQ(cases.size(), 134u);
  int with_entities = 0;
  for (const json& c : cases) {
    const Sentences truth = c.at("true").get<Sentences>();
    const Sentences predicted = c.at("pred").get<Sentences>();
    const SequenceLabelingScores scores = ScoreSequenceLabeling(truth, predicted);
    EXPECT_EQ(scores.precision, c.at("precision").get<double>()) << c.dump();
    EXPECT_EQ(scores.recall, c.at("recall").get<double>()) << c.dump();
    EXPECT_EQ(scores.f1, c.at("f1").get<double>()) << c.dump();
    EXPECT_EQ(scores.accuracy, c.at("accuracy").get<double>()) << c.dump();
    std::vector<Entity> expected;
    for (const json& e : c.at("entities_true")) {
      expected.push_back(Entity{e[0].get<std::string>(), e[1].get<int64_t>(), e[2].get<int64_t>()});
    }
    EXPECT_EQ(GetEntities(truth), expected) << c.dump();
    with_entities += scores.f1 > 0;
  }
  EXPECT_GT(with_entities, 100);  // most cases score something: the counts are exercised
}

// Worked by hand from seqeval's rules, readable without the JSON: IOB1 start, type change,
// and a sentence boundary that ends an entity.
TEST(SequenceLabelingMetricsTest, ChunkingRulesByHand) {
  const Sentences truth = {{"O", "I-PER", "I-PER", "I-LOC"}, {"I-LOC", "B-LOC"}};
  // Joined: O I-PER I-PER I-LOC O | I-LOC B-LOC O (+ final O).
  const std::vector<Entity> entities = GetEntities(truth);
  const std::vector<Entity> expected = {{"PER", 1, 2}, {"LOC", 3, 3}, {"LOC", 5, 5}, {"LOC", 6, 6}};
  EXPECT_EQ(entities, expected);
  // Predicting the PER span and one LOC: p = 2/2, r = 2/4, f1 = 2 * 1 * 0.5 / 1.5.
  const Sentences predicted = {{"O", "B-PER", "I-PER", "O"}, {"B-LOC", "O"}};
  const SequenceLabelingScores scores = ScoreSequenceLabeling(truth, predicted);
  EXPECT_EQ(scores.correct_entities, 2);
  EXPECT_EQ(scores.predicted_entities, 2);
  EXPECT_EQ(scores.true_entities, 4);
  EXPECT_EQ(scores.precision, 1.0);
  EXPECT_EQ(scores.recall, 0.5);
  EXPECT_EQ(scores.f1, 2.0 * 1.0 * 0.5 / 1.5);
  EXPECT_EQ(scores.accuracy, 2.0 / 6.0);  // O and the second I-PER
}

TEST(SequenceLabelingMetricsTest, ZeroDivisionGivesZero) {
  const SequenceLabelingScores none = ScoreSequenceLabeling({{"O", "O"}}, {{"O", "O"}});
  EXPECT_EQ(none.precision, 0.0);
  EXPECT_EQ(none.recall, 0.0);
  EXPECT_EQ(none.f1, 0.0);
  EXPECT_EQ(none.accuracy, 1.0);
  EXPECT_EQ(ScoreSequenceLabeling({}, {}).accuracy, 0.0);
}

}  // namespace
}  // namespace xlmr::train
