#include "framework/train/evaluate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "framework/core/check.h"
#include "framework/data/collate.h"
#include "framework/train/classification_metrics.h"
#include "framework/train/model_inputs.h"
#include "framework/train/regression_metrics.h"
#include "framework/train/retrieval_metrics.h"
#include "framework/train/sequence_labeling_metrics.h"

namespace xlmr::train {
namespace {

// One loss term as HF's LabelSmoother forms it: (1 - e) * nll + e * mean over classes of
// -log p; without smoothing the plain cross-entropy term, untouched. `uniform` computes that
// mean only when it is needed.
template <typename UniformTerm>
double SmoothedTerm(double nll, double label_smoothing, UniformTerm uniform) {
  if (label_smoothing == 0) return nll;
  return (1 - label_smoothing) * nll + label_smoothing * uniform();
}

int32_t Argmax(const float* row, int n) {
  return static_cast<int32_t>(std::max_element(row, row + n) - row);  // first of a tie
}

Prediction FromSequenceLogits(const float* row, int num_labels) {
  Prediction p;
  p.logits.assign(row, row + num_labels);
  const double log_total = LogSumExp(row, num_labels);
  for (double logit : p.logits) p.probabilities.push_back(std::exp(logit - log_total));
  p.label = Argmax(row, num_labels);
  return p;
}

// Example `example`'s tokens: row s of `logits` is token s ([S, L], padding past its length).
Prediction FromTokenLogits(const float* logits, int num_labels,
                           const data::TokenizedDataset& dataset, int64_t example,
                           double label_smoothing) {
  Prediction p;
  const absl::Span<const int32_t> words = dataset.word_index(example);
  for (size_t s = 0; s < words.size(); ++s) {
    if (words[s] >= 0) p.word_labels.push_back(Argmax(logits + s * num_labels, num_labels));
  }
  if (!dataset.has_token_label_ids()) return p;
  const absl::Span<const int32_t> labels = dataset.token_labels(example);
  for (size_t s = 0; s < labels.size(); ++s) {
    if (labels[s] == data::TokenizedDataset::kIgnored) continue;
    const float* row = logits + s * num_labels;
    const double log_total = LogSumExp(row, num_labels);
    p.token_loss_sum += SmoothedTerm(log_total - row[labels[s]], label_smoothing, [&] {
      // mean_j -log p_j = logsumexp - mean_j x_j
      return log_total - std::accumulate(row, row + num_labels, 0.0) / num_labels;
    });
  }
  return p;
}

// Per example: label, prediction, probability of class 1, loss.
EvalResult SingleLabelResult(const std::vector<double>& all, int num_labels) {
  std::vector<int32_t> labels, predicted;
  std::vector<double> scores;
  EvalResult result;
  for (size_t i = 0; i + 3 < all.size(); i += 4) {
    labels.push_back(static_cast<int32_t>(all[i]));
    predicted.push_back(static_cast<int32_t>(all[i + 1]));
    scores.push_back(all[i + 2]);
    result.loss += all[i + 3];
  }
  result.examples = static_cast<int64_t>(labels.size());
  if (result.examples > 0) result.loss /= static_cast<double>(result.examples);
  result.metrics = {{"accuracy", Accuracy(labels, predicted)},
                    {"macro_f1", MacroF1(labels, predicted)}};
  if (num_labels == 2) {
    if (const std::optional<double> auc = RocAuc(labels, scores)) result.metrics.push_back({"roc_auc", *auc});
  }
  return result;
}

std::vector<double> PackSingleLabel(const std::vector<Prediction>& local,
                                    const data::TokenizedDataset& dataset, int64_t begin,
                                    double label_smoothing) {
  std::vector<double> packed;
  for (size_t k = 0; k < local.size(); ++k) {
    const Prediction& p = local[k];
    const int32_t label = dataset.label(begin + static_cast<int64_t>(k));
    auto negative_log = [](double probability) { return -std::log(std::max(probability, 1e-300)); };
    const double loss = SmoothedTerm(negative_log(p.probabilities[label]), label_smoothing, [&] {
      double total = 0;
      for (double probability : p.probabilities) total += negative_log(probability);
      return total / static_cast<double>(p.probabilities.size());
    });
    packed.insert(packed.end(), {static_cast<double>(label), static_cast<double>(p.label),
                                 p.probabilities.size() > 1 ? p.probabilities[1] : 0.0, loss});
  }
  return packed;
}

// Per example: target, prediction.
std::vector<double> PackRegression(const std::vector<Prediction>& local,
                                   const data::TokenizedDataset& dataset, int64_t begin) {
  std::vector<double> packed;
  for (size_t k = 0; k < local.size(); ++k) {
    packed.insert(packed.end(), {static_cast<double>(dataset.target(begin + static_cast<int64_t>(k))),
                                 local[k].logits.at(0)});
  }
  return packed;
}

// A cross-encoder's evaluation as sentence-transformers' trainer reports it without an
// evaluator: eval_loss only, the mean binary cross-entropy with logits (in double, the stable
// form) over the (target, logit) pairs of PackRegression.
EvalResult BinaryLogitsResult(const std::vector<double>& all) {
  EvalResult result;
  double total = 0;
  for (size_t i = 0; i + 1 < all.size(); i += 2) {
    const double target = all[i], logit = all[i + 1];
    total += std::max(logit, 0.0) - logit * target + std::log1p(std::exp(-std::abs(logit)));
    ++result.examples;
  }
  result.loss = result.examples > 0 ? total / static_cast<double>(result.examples) : 0.0;
  return result;
}

EvalResult RegressionResult(const std::vector<double>& all) {
  std::vector<double> targets, predictions;
  for (size_t i = 0; i + 1 < all.size(); i += 2) {
    targets.push_back(all[i]);
    predictions.push_back(all[i + 1]);
  }
  EvalResult result;
  result.examples = static_cast<int64_t>(targets.size());
  result.loss = MeanSquaredError(targets, predictions);
  result.metrics = {{"mse", result.loss}};
  if (const std::optional<double> r = PearsonR(targets, predictions)) {
    result.metrics.push_back({"pearson", *r});
  }
  if (const std::optional<double> rho = SpearmanRho(targets, predictions)) {
    result.metrics.push_back({"spearmanr", *rho});
  }
  return result;
}

// Per example: n (labelled words), the n true label ids, the n predicted ones, the sum of the
// n loss terms. Only words with a label count, as HF's run_ner compares labels != -100.
std::vector<double> PackPerToken(const std::vector<Prediction>& local,
                                 const data::TokenizedDataset& dataset, int64_t begin) {
  std::vector<double> packed;
  for (size_t k = 0; k < local.size(); ++k) {
    const int64_t example = begin + static_cast<int64_t>(k);
    const absl::Span<const int32_t> labels = dataset.token_labels(example);
    const absl::Span<const int32_t> words = dataset.word_index(example);
    std::vector<double> truth, predicted;
    size_t word = 0;  // position in word_labels: one per word start, in token order
    for (size_t s = 0; s < labels.size(); ++s) {
      if (words[s] < 0) continue;
      if (labels[s] != data::TokenizedDataset::kIgnored) {
        truth.push_back(labels[s]);
        predicted.push_back(local[k].word_labels.at(word));
      }
      ++word;
    }
    packed.push_back(static_cast<double>(truth.size()));
    packed.insert(packed.end(), truth.begin(), truth.end());
    packed.insert(packed.end(), predicted.begin(), predicted.end());
    packed.push_back(local[k].token_loss_sum);
  }
  return packed;
}

EvalResult PerTokenResult(const std::vector<double>& all, const std::vector<std::string>& names) {
  std::vector<std::vector<std::string>> truth, predicted;
  EvalResult result;
  int64_t terms = 0;
  for (size_t i = 0; i < all.size();) {
    const auto n = static_cast<size_t>(all[i]);
    XLMR_CHECK_LE(i + 2 * n + 2, all.size()) << "packed per-token results";
    std::vector<std::string> sentence_truth, sentence_predicted;
    for (size_t w = 0; w < n; ++w) {
      sentence_truth.push_back(names.at(static_cast<size_t>(all[i + 1 + w])));
      sentence_predicted.push_back(names.at(static_cast<size_t>(all[i + 1 + n + w])));
    }
    truth.push_back(std::move(sentence_truth));
    predicted.push_back(std::move(sentence_predicted));
    result.loss += all[i + 1 + 2 * n];
    terms += static_cast<int64_t>(n);
    i += 2 * n + 2;
  }
  result.examples = static_cast<int64_t>(truth.size());
  if (terms > 0) result.loss /= static_cast<double>(terms);
  const SequenceLabelingScores scores = ScoreSequenceLabeling(truth, predicted);
  result.metrics = {{"precision", scores.precision},
                    {"recall", scores.recall},
                    {"f1", scores.f1},
                    {"accuracy", scores.accuracy}};
  return result;
}

}  // namespace

double LogSumExp(const float* row, int n) {
  const double max_value = *std::max_element(row, row + n);
  double total = 0;
  for (int j = 0; j < n; ++j) total += std::exp(row[j] - max_value);
  return max_value + std::log(total);
}

std::pair<int64_t, int64_t> RankSlice(int64_t n, const distributed::Communicator& comm) {
  return {n * comm.rank() / comm.world_size(), n * (comm.rank() + 1) / comm.world_size()};
}

std::vector<std::string> ReportedMetricNames(Objective objective) {
  switch (objective) {
    case Objective::kSingleLabel: return {"accuracy", "macro_f1", "roc_auc"};
    case Objective::kRegression: return {"mse", "pearson", "spearmanr"};
    case Objective::kBinaryLogits: return {};  // eval_loss only (BinaryLogitsResult)
    case Objective::kPerToken: return {"precision", "recall", "f1", "accuracy"};
    case Objective::kInBatchNegatives:
    case Objective::kSymmetricInBatchNegatives: return RetrievalMetricNames();  // embedding_evaluate.h
    // EmbeddingSimilarityEvaluator's names for the model's similarity (cosine): embedding_evaluate.h
    case Objective::kScoredPairs: return {"pearson_cosine", "spearman_cosine"};
    case Objective::kSpanStartEnd:  // qa_evaluate.h: "squad", then "squad_v2"'s names
      return {"exact_match", "f1", "exact", "HasAns_exact", "HasAns_f1", "NoAns_exact",
              "NoAns_f1", "best_exact", "best_f1"};
  }
  return {};
}

std::optional<double> EvalResult::Metric(const std::string& name) const {
  for (const auto& [key, value] : metrics) {
    if (key == name) return value;
  }
  return std::nullopt;
}

std::vector<Prediction> Predict(TrainableModel& model, const data::TokenizedDataset& dataset,
                                int64_t begin, int64_t end, const EvalSettings& settings) {
  std::vector<Prediction> predictions;
  PassContext context;
  context.autocast = settings.autocast;
  const bool packed = settings.padding_free && model.TakesPackedInputs(settings.autocast);
  for (int64_t first = begin; first < end; first += settings.batch_size) {
    std::vector<int64_t> indices(std::min(settings.batch_size, end - first));
    std::iota(indices.begin(), indices.end(), first);
    const data::Batch batch =
        packed ? data::CollatePacked(dataset, indices, settings.segment_separator_id)
               : data::Collate(dataset, indices, settings.pad_id, settings.segment_separator_id);
    const ModelInputs inputs = ToModelInputs(batch, settings.device);
    const Tensor logits = model.Forward(inputs, context, /*keep_activations=*/false);
    const std::vector<float> values = logits.ToFloatVector();
    const int num_labels = static_cast<int>(logits.dim(-1));
    for (size_t row = 0; row < indices.size(); ++row) {
      if (settings.objective == Objective::kPerToken) {
        // Example `row`'s first token: row cu_seqlens[row] of [T, L], or row `row` of [B, S, L].
        const int64_t first_token =
            packed ? batch.cu_seqlens.data<int32_t>()[row] : static_cast<int64_t>(row) * logits.dim(1);
        predictions.push_back(
            FromTokenLogits(values.data() + first_token * num_labels, num_labels, dataset,
                            indices[row], settings.label_smoothing));
      } else {
        predictions.push_back(FromSequenceLogits(values.data() + row * num_labels, num_labels));
      }
    }
  }
  return predictions;
}

EvalResult Evaluate(TrainableModel& model, const data::TokenizedDataset& dataset,
                    const std::vector<std::string>& label_names, distributed::Communicator& comm,
                    const EvalSettings& settings) {
  const auto [begin, end] = RankSlice(dataset.size(), comm);
  const std::vector<Prediction> local = Predict(model, dataset, begin, end, settings);
  switch (settings.objective) {
    case Objective::kSingleLabel:
      return SingleLabelResult(comm.AllGatherDoubles(PackSingleLabel(local, dataset, begin, settings.label_smoothing)),
                               static_cast<int>(label_names.size()));
    case Objective::kRegression:
      return RegressionResult(comm.AllGatherDoubles(PackRegression(local, dataset, begin)));
    case Objective::kBinaryLogits:
      return BinaryLogitsResult(comm.AllGatherDoubles(PackRegression(local, dataset, begin)));
    case Objective::kPerToken:
      return PerTokenResult(comm.AllGatherDoubles(PackPerToken(local, dataset, begin)), label_names);
    case Objective::kSpanStartEnd:
    case Objective::kInBatchNegatives:
    case Objective::kSymmetricInBatchNegatives:
    case Objective::kScoredPairs: break;
  }
  XLMR_CHECK(false) << "question answering and sentence embeddings have their own evaluations "
                       "(qa_evaluate.h, embedding_evaluate.h)";
  return {};
}

}  // namespace xlmr::train
