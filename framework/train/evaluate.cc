#include "framework/train/evaluate.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "framework/data/collate.h"
#include "framework/train/classification_metrics.h"

namespace xlmr::train {
namespace {

Prediction FromLogits(const float* row, int num_labels) {
  Prediction p;
  p.logits.assign(row, row + num_labels);
  const double max_logit = *std::max_element(p.logits.begin(), p.logits.end());
  double total = 0;
  for (double logit : p.logits) total += std::exp(logit - max_logit);
  for (double logit : p.logits) p.probabilities.push_back(std::exp(logit - max_logit) / total);
  p.label = static_cast<int32_t>(std::max_element(p.logits.begin(), p.logits.end()) - p.logits.begin());
  return p;
}

}  // namespace

std::vector<Prediction> Predict(TrainableModel& model, const data::TokenizedDataset& dataset,
                                int64_t begin, int64_t end, const EvalSettings& settings) {
  std::vector<Prediction> predictions;
  PassContext context;
  context.autocast = settings.autocast;
  for (int64_t first = begin; first < end; first += settings.batch_size) {
    std::vector<int64_t> indices(std::min(settings.batch_size, end - first));
    std::iota(indices.begin(), indices.end(), first);
    const data::Batch batch = data::Collate(dataset, indices, settings.pad_id);
    const ModelInputs inputs{batch.input_ids.ToDevice(settings.device),
                             batch.attention_mask.ToDevice(settings.device)};
    const Tensor logits = model.Forward(inputs, context, /*keep_activations=*/false);
    const std::vector<float> values = logits.ToFloatVector();
    const int num_labels = static_cast<int>(logits.dim(1));
    for (size_t row = 0; row < indices.size(); ++row) {
      predictions.push_back(FromLogits(values.data() + row * num_labels, num_labels));
    }
  }
  return predictions;
}

EvalResult Evaluate(TrainableModel& model, const data::TokenizedDataset& dataset, int num_labels,
                    distributed::Communicator& comm, const EvalSettings& settings) {
  const int64_t n = static_cast<int64_t>(dataset.size());
  const int64_t begin = n * comm.rank() / comm.world_size();
  const int64_t end = n * (comm.rank() + 1) / comm.world_size();
  const std::vector<Prediction> local = Predict(model, dataset, begin, end, settings);
  // Per example: label, prediction, probability of class 1, loss; gathered in rank order.
  std::vector<double> packed;
  for (int64_t i = begin; i < end; ++i) {
    const Prediction& p = local[i - begin];
    const int32_t label = dataset.label(i);
    packed.insert(packed.end(), {static_cast<double>(label), static_cast<double>(p.label),
                                 num_labels > 1 ? p.probabilities[1] : 0.0,
                                 -std::log(std::max(p.probabilities[label], 1e-300))});
  }
  const std::vector<double> all = comm.AllGatherDoubles(packed);
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
  result.accuracy = Accuracy(labels, predicted);
  result.macro_f1 = MacroF1(labels, predicted);
  if (num_labels == 2) result.roc_auc = RocAuc(labels, scores);
  return result;
}

}  // namespace xlmr::train
