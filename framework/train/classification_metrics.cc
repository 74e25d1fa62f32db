#include "framework/train/classification_metrics.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "framework/core/check.h"

namespace xlmr::train {

double Accuracy(const std::vector<int32_t>& labels, const std::vector<int32_t>& predictions) {
  XLMR_CHECK_EQ(labels.size(), predictions.size());
  if (labels.empty()) return 0.0;
  int64_t correct = 0;
  for (size_t i = 0; i < labels.size(); ++i) correct += labels[i] == predictions[i] ? 1 : 0;
  return static_cast<double>(correct) / static_cast<double>(labels.size());
}

double MacroF1(const std::vector<int32_t>& labels, const std::vector<int32_t>& predictions) {
  XLMR_CHECK_EQ(labels.size(), predictions.size());
  std::set<int32_t> classes(labels.begin(), labels.end());
  classes.insert(predictions.begin(), predictions.end());
  if (classes.empty()) return 0.0;
  std::map<int32_t, int64_t> true_positive, false_positive, false_negative;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] == predictions[i]) {
      ++true_positive[labels[i]];
    } else {
      ++false_positive[predictions[i]];
      ++false_negative[labels[i]];
    }
  }
  double sum = 0;
  for (int32_t c : classes) {
    const double tp2 = 2.0 * static_cast<double>(true_positive[c]);
    sum += tp2 / (tp2 + static_cast<double>(false_positive[c] + false_negative[c]));
  }
  return sum / static_cast<double>(classes.size());
}

std::optional<double> RocAuc(const std::vector<int32_t>& labels, const std::vector<double>& scores) {
  XLMR_CHECK_EQ(labels.size(), scores.size());
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  // Sum of the (1-based, tie-averaged) ranks of the positives.
  double positive_rank_sum = 0;
  int64_t positives = 0;
  for (size_t begin = 0; begin < order.size();) {
    size_t end = begin;
    while (end < order.size() && scores[order[end]] == scores[order[begin]]) ++end;
    const double average_rank = (static_cast<double>(begin + 1) + static_cast<double>(end)) / 2.0;
    for (size_t i = begin; i < end; ++i) {
      if (labels[order[i]] == 1) {
        positive_rank_sum += average_rank;
        ++positives;
      }
    }
    begin = end;
  }
  const int64_t negatives = static_cast<int64_t>(labels.size()) - positives;
  if (positives == 0 || negatives == 0) return std::nullopt;
  const double p = static_cast<double>(positives);
  return (positive_rank_sum - p * (p + 1) / 2.0) / (p * static_cast<double>(negatives));
}

}  // namespace xlmr::train
