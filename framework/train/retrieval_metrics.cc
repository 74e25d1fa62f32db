#include "framework/train/retrieval_metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "absl/strings/str_cat.h"
#include "framework/core/check.h"

namespace xlmr::train {
namespace {

constexpr int64_t kAccuracyAt[] = {1, 3, 5, 10};
constexpr int64_t kPrecisionRecallAt[] = {1, 3, 5, 10};
constexpr int64_t kNdcgAt = 10, kMrrAt = 10, kMapAt = 100;

// numpy's pairwise_sum for float64 (numpy/core/src/umath/loops_utils.h.src).
double PairwiseSum(const double* a, int64_t n) {
  if (n < 8) {
    double sum = 0.0;  // numpy starts from -0.0; equal for every sum that is not all -0.0
    for (int64_t i = 0; i < n; ++i) sum += a[i];
    return sum;
  }
  if (n <= 128) {
    double r[8];
    for (int j = 0; j < 8; ++j) r[j] = a[j];
    int64_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (int j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += a[i];
    return sum;
  }
  int64_t half = n / 2;
  half -= half % 8;
  return PairwiseSum(a, half) + PairwiseSum(a + half, n - half);
}

// Sum over the first k ranks of relevance / log2(rank + 2), as compute_dcg_at_k.
double DiscountedGain(const std::vector<int>& relevances, int64_t k) {
  double dcg = 0.0;
  for (int64_t i = 0; i < std::min<int64_t>(static_cast<int64_t>(relevances.size()), k); ++i) {
    dcg += relevances[i] / std::log2(static_cast<double>(i + 2));
  }
  return dcg;
}

// Each row of `values` ([n, width]) divided by its norm (cos_sim's normalisation).
std::vector<double> UnitRows(const std::vector<double>& values, int64_t width) {
  std::vector<double> unit(values.size());
  for (size_t r = 0; r * width < values.size(); ++r) {
    double squares = 0.0;
    for (int64_t j = 0; j < width; ++j) squares += values[r * width + j] * values[r * width + j];
    const double norm = std::max(std::sqrt(squares), 1e-12);
    for (int64_t j = 0; j < width; ++j) unit[r * width + j] = values[r * width + j] / norm;
  }
  return unit;
}

}  // namespace

std::vector<double> CosineScores(const std::vector<double>& queries, const std::vector<double>& corpus, int64_t width) {
  XLMR_CHECK(width > 0 && queries.size() % width == 0 && corpus.size() % width == 0) << "rows of " << width;
  const std::vector<double> q = UnitRows(queries, width), d = UnitRows(corpus, width);
  const size_t rows = q.size() / width, documents = d.size() / width;
  std::vector<double> scores(rows * documents);
  for (size_t i = 0; i < rows; ++i) {
    for (size_t j = 0; j < documents; ++j) {
      scores[i * documents + j] = std::inner_product(q.begin() + i * width, q.begin() + (i + 1) * width,
                                                     d.begin() + j * width, 0.0);
    }
  }
  return scores;
}

std::vector<double> PairCosines(const std::vector<double>& a, const std::vector<double>& b, int64_t width) {
  XLMR_CHECK(width > 0 && a.size() == b.size() && a.size() % width == 0) << "pairs of rows of " << width;
  const std::vector<double> u = UnitRows(a, width), v = UnitRows(b, width);
  std::vector<double> cosines(a.size() / width);
  for (size_t i = 0; i < cosines.size(); ++i) {
    cosines[i] = std::inner_product(u.begin() + i * width, u.begin() + (i + 1) * width, v.begin() + i * width, 0.0);
  }
  return cosines;
}

double NumpyMean(const std::vector<double>& values) {
  XLMR_CHECK(!values.empty()) << "mean of no values";
  return PairwiseSum(values.data(), static_cast<int64_t>(values.size())) / static_cast<double>(values.size());
}

std::vector<std::string> RetrievalMetricNames() {
  std::vector<std::string> names;
  for (int64_t k : kAccuracyAt) names.push_back(absl::StrCat("cosine_accuracy@", k));
  for (int64_t k : kPrecisionRecallAt) names.push_back(absl::StrCat("cosine_precision@", k));
  for (int64_t k : kPrecisionRecallAt) names.push_back(absl::StrCat("cosine_recall@", k));
  names.push_back(absl::StrCat("cosine_ndcg@", kNdcgAt));
  names.push_back(absl::StrCat("cosine_mrr@", kMrrAt));
  names.push_back(absl::StrCat("cosine_map@", kMapAt));
  return names;
}

std::vector<std::vector<int64_t>> RankCorpus(const std::vector<double>& scores, int64_t queries, int64_t corpus,
                                             int64_t top_k) {
  XLMR_CHECK(static_cast<int64_t>(scores.size()) == queries * corpus && top_k <= corpus) << "scores";
  std::vector<std::vector<int64_t>> ranked(queries);
  std::vector<int64_t> order(corpus);
  for (int64_t q = 0; q < queries; ++q) {
    const double* row = scores.data() + q * corpus;
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(order.begin(), order.begin() + top_k, order.end(), [row](int64_t a, int64_t b) {
      return row[a] != row[b] ? row[a] > row[b] : a < b;
    });
    ranked[q].assign(order.begin(), order.begin() + top_k);
  }
  return ranked;
}

std::vector<std::pair<std::string, double>> RetrievalMetrics(const std::vector<std::vector<int64_t>>& ranked,
                                                             const std::vector<std::vector<int64_t>>& relevant) {
  XLMR_CHECK(!ranked.empty() && ranked.size() == relevant.size()) << "one ranking and relevant set per query";
  const double queries = static_cast<double>(ranked.size());
  double accuracy[4] = {0, 0, 0, 0};
  std::vector<double> precision[4], recall[4], ndcg, average_precision;
  double mrr = 0.0;
  for (size_t q = 0; q < ranked.size(); ++q) {
    const std::set<int64_t> wanted(relevant[q].begin(), relevant[q].end());
    XLMR_CHECK(!wanted.empty()) << "query " << q << " has no relevant document";
    const std::vector<int64_t>& hits = ranked[q];
    auto relevant_at = [&](size_t rank) { return rank < hits.size() && wanted.count(hits[rank]) > 0; };
    for (int i = 0; i < 4; ++i) {
      for (int64_t rank = 0; rank < kAccuracyAt[i]; ++rank) {
        if (relevant_at(rank)) {
          accuracy[i] += 1;
          break;
        }
      }
      int64_t correct = 0;
      for (int64_t rank = 0; rank < kPrecisionRecallAt[i]; ++rank) correct += relevant_at(rank);
      precision[i].push_back(static_cast<double>(correct) / static_cast<double>(kPrecisionRecallAt[i]));
      recall[i].push_back(static_cast<double>(correct) / static_cast<double>(wanted.size()));
    }
    for (int64_t rank = 0; rank < kMrrAt; ++rank) {
      if (relevant_at(rank)) {
        mrr += 1.0 / static_cast<double>(rank + 1);
        break;
      }
    }
    std::vector<int> predicted;
    for (int64_t rank = 0; rank < std::min<int64_t>(kNdcgAt, static_cast<int64_t>(hits.size())); ++rank) {
      predicted.push_back(relevant_at(rank) ? 1 : 0);
    }
    ndcg.push_back(DiscountedGain(predicted, kNdcgAt) / DiscountedGain(std::vector<int>(wanted.size(), 1), kNdcgAt));
    int64_t correct = 0;
    double precisions = 0.0;
    for (int64_t rank = 0; rank < std::min<int64_t>(kMapAt, static_cast<int64_t>(hits.size())); ++rank) {
      if (relevant_at(rank)) {
        ++correct;
        precisions += static_cast<double>(correct) / static_cast<double>(rank + 1);
      }
    }
    average_precision.push_back(precisions / static_cast<double>(std::min<int64_t>(kMapAt, wanted.size())));
  }
  std::vector<double> values;
  for (double hits : accuracy) values.push_back(hits / queries);
  for (const auto& p : precision) values.push_back(NumpyMean(p));
  for (const auto& r : recall) values.push_back(NumpyMean(r));
  values.push_back(NumpyMean(ndcg));
  values.push_back(mrr / queries);
  values.push_back(NumpyMean(average_precision));
  const std::vector<std::string> names = RetrievalMetricNames();
  std::vector<std::pair<std::string, double>> figures;
  for (size_t i = 0; i < names.size(); ++i) figures.push_back({names[i], values[i]});
  return figures;
}

}  // namespace xlmr::train
