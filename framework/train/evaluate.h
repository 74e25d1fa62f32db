// Evaluation over a tokenized data set: every rank runs forward (no dropout, no saved
// activations, the training precision policy) on its contiguous slice, then the per-example
// results are gathered so that every rank computes the same metrics.
#ifndef XLMR_FRAMEWORK_TRAIN_EVALUATE_H_
#define XLMR_FRAMEWORK_TRAIN_EVALUATE_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "framework/data/tokenized_dataset.h"
#include "framework/distributed/communicator.h"
#include "framework/train/model_interface.h"

namespace xlmr::train {

struct EvalSettings {
  int64_t batch_size = 32;
  DType autocast = DType::kF32;  // PassContext::autocast, the training run's
  int32_t pad_id = 1;
  Device device = Device::kCpu;
};

struct EvalResult {
  double loss = 0;  // mean cross-entropy
  double accuracy = 0;
  double macro_f1 = 0;
  std::optional<double> roc_auc;  // two labels only
  int64_t examples = 0;
};

// Per-example outputs of a forward pass: the predicted class and the softmax probabilities.
struct Prediction {
  int32_t label = 0;  // argmax
  std::vector<double> probabilities;
  std::vector<double> logits;
};

// Forward over examples [begin, end) of `dataset` in batches; no metrics, no communication.
std::vector<Prediction> Predict(TrainableModel& model, const data::TokenizedDataset& dataset,
                                int64_t begin, int64_t end, const EvalSettings& settings);

EvalResult Evaluate(TrainableModel& model, const data::TokenizedDataset& dataset, int num_labels,
                    distributed::Communicator& comm, const EvalSettings& settings);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_EVALUATE_H_
