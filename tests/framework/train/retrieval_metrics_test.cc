// framework/train/retrieval_metrics.h against sentence-transformers' InformationRetrievalEvaluator:
// testdata/retrieval_golden.json (make_retrieval_golden.py) holds query and corpus embeddings,
// each query's relevant documents and the evaluator's 15 figures. Ours: CosineScores, RankCorpus
// (the 100 best, or the whole corpus when smaller) and RetrievalMetrics, as the sentence-embedding
// evaluation runs them.
//
// Tolerance: none. The figures are counts and sums of 1/rank, 1/log2(rank + 2) and precisions
// over the same ranking; the means are taken in the evaluator's order (a running sum, or
// numpy.mean's pairwise summation: NumpyMean), so every figure must be the same double. The
// rankings come from scores in double where the evaluator's are fp32: the cases hold exact ties
// (copies of one document, broken by the lower corpus index) but no near ties.
#include <fstream>
#include <string>
#include <vector>

#include "framework/train/retrieval_metrics.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {
namespace {

const char kGolden[] = "tests/framework/train/testdata/retrieval_golden.json";

TEST(RetrievalMetricsTest, FiguresEqualSentenceTransformersEvaluator) {
  std::ifstream file(kGolden);
  ASSERT_TRUE(file.good()) << kGolden;
  const nlohmann::json cases = nlohmann::json::parse(file);
  ASSERT_EQ(cases.size(), 2u);
  for (const nlohmann::json& c : cases) {
    const int64_t width = c.at("width");
    const std::vector<double> queries = c.at("queries"), corpus = c.at("corpus");
    const std::vector<std::vector<int64_t>> relevant = c.at("relevant");
    const int64_t rows = static_cast<int64_t>(queries.size()) / width, documents = static_cast<int64_t>(corpus.size()) / width;
    const std::vector<std::vector<int64_t>> ranked =
        RankCorpus(CosineScores(queries, corpus, width), rows, documents, std::min<int64_t>(100, documents));
    const std::vector<std::pair<std::string, double>> figures = RetrievalMetrics(ranked, relevant);
    ASSERT_EQ(figures.size(), c.at("figures").size());
    for (const auto& [name, value] : figures) {
      EXPECT_EQ(value, c.at("figures").at(name).get<double>()) << c.at("name") << " " << name;
    }
  }
}

TEST(RetrievalMetricsTest, TiesGoToTheLowerCorpusIndex) {
  // Documents 1 and 2 score the same for the query; 0 scores lower.
  const std::vector<std::vector<int64_t>> ranked = RankCorpus({0.1, 0.5, 0.5}, 1, 3, 3);
  EXPECT_EQ(ranked[0], (std::vector<int64_t>{1, 2, 0}));
}

TEST(RetrievalMetricsTest, NumpyMeanSumsPairwise) {
  // 0.1 ten times: numpy.mean gives 0.1 exactly (eight running sums, then the last two); a
  // running sum from the left gives 0.09999999999999999.
  const std::vector<double> tenths(10, 0.1);
  double running = 0.0;
  for (double v : tenths) running += v;
  ASSERT_NE(running / 10, 0.1);
  EXPECT_EQ(NumpyMean(tenths), 0.1);
}

}  // namespace
}  // namespace xlmr::train
