// MSE, Pearson and Spearman against numpy 2.4 / scipy 1.17 (testdata/make_metric_cases.py).
// Tolerance 1e-12 relative: numpy sums pairwise and scipy's pearsonr normalises each centred
// vector before the dot product, so the last few bits of a double differ from our sequential
// two-pass sums (measured differences are a few ulps; 1e-12 is far above them and far below
// any real error, e.g. an off-by-one tie rank changes rho in the 3rd digit).
#include "framework/train/regression_metrics.h"

#include <cmath>
#include <fstream>
#include <optional>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;

constexpr double kRelative = 1e-12;

void ExpectClose(std::optional<double> actual, const json& expected, const json& c) {
  if (expected.is_null()) {
    EXPECT_EQ(actual, std::nullopt) << c.dump().substr(0, 200);
    return;
  }
  ASSERT_TRUE(actual.has_value()) << c.dump().substr(0, 200);
  const double want = expected.get<double>();
  EXPECT_NEAR(*actual, want, kRelative * std::max(1.0, std::fabs(want))) << c.dump().substr(0, 200);
}

TEST(RegressionMetricsTest, MatchesNumpyAndScipy) {
  std::ifstream file("tests/framework/train/testdata/regression_cases.json");
  ASSERT_TRUE(file.good());
  const json cases = json::parse(file).at("cases");
  ASSERT_EQ(cases.size(), 12u);
  for (const json& c : cases) {
    const auto x = c.at("x").get<std::vector<double>>();
    const auto y = c.at("y").get<std::vector<double>>();
    ExpectClose(MeanSquaredError(x, y), c.at("mse"), c);
    ExpectClose(PearsonR(x, y), c.at("pearson"), c);
    ExpectClose(SpearmanRho(x, y), c.at("spearman"), c);
  }
}

TEST(RegressionMetricsTest, TiesShareTheirAverageRank) {
  EXPECT_THAT(AverageRanks({3.0, 1.0, 3.0, 2.0, 3.0}), ElementsAre(4.0, 1.0, 4.0, 2.0, 4.0));
}

TEST(RegressionMetricsTest, UndefinedCorrelationsAreNullopt) {
  EXPECT_EQ(PearsonR({1.0}, {2.0}), std::nullopt);
  EXPECT_EQ(PearsonR({1.0, 1.0}, {2.0, 3.0}), std::nullopt);
  EXPECT_EQ(SpearmanRho({1.0, 2.0}, {4.0, 4.0}), std::nullopt);
  EXPECT_EQ(MeanSquaredError({1.0, 2.0}, {2.0, 4.0}), 2.5);
}

}  // namespace
}  // namespace xlmr::train
