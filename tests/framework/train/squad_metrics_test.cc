// SQuAD metrics against Hugging Face evaluate's "squad" and "squad_v2" scoring code
// (testdata/squad_metric_cases.json, made by testdata/make_squad_metric_cases.py).
#include "framework/train/squad_metrics.h"

#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {
namespace {

using nlohmann::json;

const char kCases[] = "tests/framework/train/testdata/squad_metric_cases.json";

json Golden() {
  std::ifstream file(kCases);
  EXPECT_TRUE(file.good()) << kCases;
  return json::parse(file);
}

std::vector<SquadItem> Items(const json& cases) {
  std::vector<SquadItem> items;
  for (const json& c : cases) {
    items.push_back({c.at("prediction").get<std::string>(),
                     c.at("answers").get<std::vector<std::string>>(),
                     c.value("no_answer_probability", 0.0)});
  }
  return items;
}

TEST(SquadMetricsTest, NormalizeAnswerEqualsTheOfficialScript) {
  const json golden = Golden();  // a named copy: a loop over a temporary's member dangles
  ASSERT_GE(golden.at("normalize").size(), 10u);
  for (const json& c : golden.at("normalize")) {
    EXPECT_EQ(NormalizeAnswer(c.at("text").get<std::string>()),
              c.at("normalized").get<std::string>())
        << c.at("text");
  }
}

// The same double operations in the same order as Python: equal to 4 ulps (EXPECT_DOUBLE_EQ),
// in practice bit for bit.
TEST(SquadMetricsTest, SquadV1EqualsEvaluate) {
  const json v1 = Golden().at("v1");
  const std::vector<SquadItem> items = Items(v1.at("cases"));
  const SquadV1Scores scores = ComputeSquadV1(items);
  EXPECT_DOUBLE_EQ(scores.exact_match, v1.at("scores").at("exact_match").get<double>());
  EXPECT_DOUBLE_EQ(scores.f1, v1.at("scores").at("f1").get<double>());
  for (size_t i = 0; i < items.size(); ++i) {
    const SquadV1Scores one = ComputeSquadV1({items[i]});
    EXPECT_DOUBLE_EQ(one.exact_match, v1.at("each")[i].at("exact_match").get<double>()) << i;
    EXPECT_DOUBLE_EQ(one.f1, v1.at("each")[i].at("f1").get<double>()) << i;
  }
}

TEST(SquadMetricsTest, SquadV2EqualsEvaluate) {
  const json golden = Golden();
  ASSERT_GE(golden.at("v2").size(), 4u);
  for (const json& run : golden.at("v2")) {
    const SquadV2Scores s =
        ComputeSquadV2(Items(run.at("cases")), run.at("no_answer_threshold").get<double>());
    const json& want = run.at("scores");
    const std::string where = run.dump().substr(0, 100);
    EXPECT_DOUBLE_EQ(s.exact, want.at("exact").get<double>()) << where;
    EXPECT_DOUBLE_EQ(s.f1, want.at("f1").get<double>()) << where;
    EXPECT_EQ(s.total, want.at("total").get<int64_t>()) << where;
    ASSERT_EQ(s.has_ans, want.contains("HasAns_exact")) << where;
    if (s.has_ans) {
      EXPECT_DOUBLE_EQ(s.has_ans_exact, want.at("HasAns_exact").get<double>()) << where;
      EXPECT_DOUBLE_EQ(s.has_ans_f1, want.at("HasAns_f1").get<double>()) << where;
      EXPECT_EQ(s.has_ans_total, want.at("HasAns_total").get<int64_t>()) << where;
    }
    ASSERT_EQ(s.no_ans, want.contains("NoAns_exact")) << where;
    if (s.no_ans) {
      EXPECT_DOUBLE_EQ(s.no_ans_exact, want.at("NoAns_exact").get<double>()) << where;
      EXPECT_DOUBLE_EQ(s.no_ans_f1, want.at("NoAns_f1").get<double>()) << where;
      EXPECT_EQ(s.no_ans_total, want.at("NoAns_total").get<int64_t>()) << where;
    }
    EXPECT_DOUBLE_EQ(s.best_exact, want.at("best_exact").get<double>()) << where;
    EXPECT_DOUBLE_EQ(s.best_exact_thresh, want.at("best_exact_thresh").get<double>()) << where;
    EXPECT_DOUBLE_EQ(s.best_f1, want.at("best_f1").get<double>()) << where;
    EXPECT_DOUBLE_EQ(s.best_f1_thresh, want.at("best_f1_thresh").get<double>()) << where;
  }
}

// The names and their order are evaluate's: the golden dicts keep Python's insertion order.
TEST(SquadMetricsTest, FiguresCarryEvaluatesNamesInItsOrder) {
  std::ifstream file(kCases);
  ASSERT_TRUE(file.good()) << kCases;
  const nlohmann::ordered_json golden = nlohmann::ordered_json::parse(file);
  const nlohmann::ordered_json& v1 = golden.at("v1");
  const auto figures = SquadV1Figures(ComputeSquadV1(Items(json(v1.at("cases")))));
  ASSERT_EQ(figures.size(), v1.at("scores").size());
  size_t i = 0;
  for (auto it = v1.at("scores").begin(); it != v1.at("scores").end(); ++it, ++i) {
    EXPECT_EQ(figures[i].first, it.key());
    EXPECT_DOUBLE_EQ(figures[i].second, it.value().get<double>());
  }
  ASSERT_GE(golden.at("v2").size(), 4u);
  for (const nlohmann::ordered_json& run : golden.at("v2")) {
    const auto v2 = SquadV2Figures(ComputeSquadV2(Items(json(run.at("cases"))),
                                                  run.at("no_answer_threshold").get<double>()));
    const nlohmann::ordered_json& want = run.at("scores");
    ASSERT_EQ(v2.size(), want.size()) << want.dump();
    size_t k = 0;
    for (auto it = want.begin(); it != want.end(); ++it, ++k) {
      EXPECT_EQ(v2[k].first, it.key());
      EXPECT_DOUBLE_EQ(v2[k].second, it.value().get<double>()) << it.key();
    }
  }
}

}  // namespace
}  // namespace xlmr::train
