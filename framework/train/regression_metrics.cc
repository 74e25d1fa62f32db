#include "framework/train/regression_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "framework/core/check.h"

namespace xlmr::train {
namespace {

void CheckFinite(const std::vector<double>& values) {
  for (size_t i = 0; i < values.size(); ++i) {
    XLMR_CHECK(std::isfinite(values[i])) << "value " << i << " is " << values[i];
  }
}

double Mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

}  // namespace

double MeanSquaredError(const std::vector<double>& labels, const std::vector<double>& predictions) {
  XLMR_CHECK_EQ(labels.size(), predictions.size());
  XLMR_CHECK(!labels.empty()) << "mean squared error of no examples";
  CheckFinite(labels);
  CheckFinite(predictions);
  double sum = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const double error = predictions[i] - labels[i];
    sum += error * error;
  }
  return sum / static_cast<double>(labels.size());
}

std::optional<double> PearsonR(const std::vector<double>& x, const std::vector<double>& y) {
  XLMR_CHECK_EQ(x.size(), y.size());
  CheckFinite(x);
  CheckFinite(y);
  if (x.size() < 2) return std::nullopt;
  // Two passes about the means: the one-pass sum-of-products formula cancels badly when the
  // values are large and close together.
  const double mean_x = Mean(x);
  const double mean_y = Mean(y);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double dx = x[i] - mean_x;
    const double dy = y[i] - mean_y;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx == 0.0 || syy == 0.0) return std::nullopt;  // a constant input: scipy gives nan
  const double r = sxy / (std::sqrt(sxx) * std::sqrt(syy));
  return std::clamp(r, -1.0, 1.0);
}

std::vector<double> AverageRanks(const std::vector<double>& values) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin;
    while (end < order.size() && values[order[end]] == values[order[begin]]) ++end;
    // Positions begin..end-1 hold ranks begin+1..end; each gets their mean.
    const double average = (static_cast<double>(begin + 1) + static_cast<double>(end)) / 2.0;
    for (size_t i = begin; i < end; ++i) ranks[order[i]] = average;
    begin = end;
  }
  return ranks;
}

std::optional<double> SpearmanRho(const std::vector<double>& x, const std::vector<double>& y) {
  XLMR_CHECK_EQ(x.size(), y.size());
  CheckFinite(x);
  CheckFinite(y);
  return PearsonR(AverageRanks(x), AverageRanks(y));
}

}  // namespace xlmr::train
