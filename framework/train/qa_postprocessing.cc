#include "framework/train/qa_postprocessing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "framework/core/check.h"

namespace xlmr::train {
namespace {

struct Candidate {
  bool is_null = false;
  int64_t begin = 0;  // bytes of the context
  int64_t end = 0;
  float score = 0;
  float start_logit = 0;
  float end_logit = 0;
};

// Indices of the `count` largest values, largest first; among equal values the later index
// first (numpy's argsort(...)[::-1] on a stable ascending sort).
std::vector<int> TopIndices(const std::vector<float>& values, int count) {
  std::vector<int> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&values](int a, int b) { return values[a] < values[b]; });
  std::reverse(order.begin(), order.end());
  if (static_cast<int>(order.size()) > count) order.resize(count);
  return order;
}

void AddWindowCandidates(const data::QaFeature& feature, const std::vector<float>& start,
                         const std::vector<float>& end, const QaPostprocessOptions& options,
                         std::vector<Candidate>* candidates) {
  const std::vector<int> ends = TopIndices(end, options.n_best_size);
  for (int s : TopIndices(start, options.n_best_size)) {
    for (int e : ends) {
      if (!feature.is_context[s] || !feature.is_context[e]) continue;
      if (e < s || e - s + 1 > options.max_answer_length) continue;
      candidates->push_back({false, feature.offsets[s].begin, feature.offsets[e].end,
                             start[s] + end[e], start[s], end[e]});
    }
  }
}

}  // namespace

std::vector<QaPrediction> PostprocessQaPredictions(
    const std::vector<data::QaExample>& examples, const std::vector<data::QaFeature>& features,
    const std::vector<std::vector<float>>& start_logits,
    const std::vector<std::vector<float>>& end_logits, const QaPostprocessOptions& options) {
  XLMR_CHECK(start_logits.size() == features.size() && end_logits.size() == features.size())
      << start_logits.size() << " and " << end_logits.size() << " logit rows for "
      << features.size() << " features";
  XLMR_CHECK(options.n_best_size >= 1 && options.max_answer_length >= 1);
  std::vector<std::vector<size_t>> windows(examples.size());
  for (size_t f = 0; f < features.size(); ++f) {
    XLMR_CHECK(start_logits[f].size() == features[f].input_ids.size() &&
               end_logits[f].size() == features[f].input_ids.size())
        << "feature " << f;
    windows.at(features[f].example_index).push_back(f);
  }
  std::vector<QaPrediction> predictions;
  predictions.reserve(examples.size());
  for (size_t x = 0; x < examples.size(); ++x) {
    std::vector<Candidate> candidates;
    std::optional<Candidate> null;
    for (size_t f : windows[x]) {
      const std::vector<float>& start = start_logits[f];
      const std::vector<float>& end = end_logits[f];
      const float null_score = start[0] + end[0];
      if (!null.has_value() || null->score > null_score) {
        null = Candidate{true, 0, 0, null_score, start[0], end[0]};
      }
      AddWindowCandidates(features[f], start, end, options, &candidates);
    }
    if (options.version_2_with_negative && null.has_value()) candidates.push_back(*null);
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
    if (static_cast<int>(candidates.size()) > options.n_best_size) {
      candidates.resize(options.n_best_size);
    }
    if (options.version_2_with_negative && null.has_value() &&
        std::none_of(candidates.begin(), candidates.end(),
                     [](const Candidate& c) { return c.is_null; })) {
      candidates.push_back(*null);
    }
    const std::string& context = examples[x].context;
    QaPrediction prediction;
    prediction.id = examples[x].id;
    std::vector<float> scores;
    for (const Candidate& c : candidates) {
      prediction.nbest.push_back(
          {context.substr(c.begin, c.end - c.begin), c.start_logit, c.end_logit, 0.0f});
      scores.push_back(c.score);
    }
    if (prediction.nbest.empty() ||
        (prediction.nbest.size() == 1 && prediction.nbest[0].text.empty())) {
      prediction.nbest.insert(prediction.nbest.begin(),
                              QaCandidate{"empty", 0.0f, 0.0f, 0.0f, /*placeholder=*/true});
      scores.insert(scores.begin(), 0.0f);
    }
    // Softmax of the scores in float32 (numpy's dtype for them).
    const float max_score = *std::max_element(scores.begin(), scores.end());
    float total = 0;
    for (float& score : scores) {
      score = std::exp(score - max_score);
      total += score;
    }
    for (size_t i = 0; i < scores.size(); ++i) prediction.nbest[i].probability = scores[i] / total;
    if (!options.version_2_with_negative) {
      prediction.answer = prediction.nbest.front().text;
    } else {
      const auto best = std::find_if(prediction.nbest.begin(), prediction.nbest.end(),
                                     [](const QaCandidate& c) { return !c.text.empty(); });
      XLMR_CHECK(best != prediction.nbest.end());
      const float null_odds = null->score - best->start_logit - best->end_logit;
      prediction.null_odds = null_odds;
      prediction.answer = null_odds > options.null_score_diff_threshold ? "" : best->text;
    }
    predictions.push_back(std::move(prediction));
  }
  return predictions;
}

}  // namespace xlmr::train
