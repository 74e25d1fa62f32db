// Evaluation over a tokenized data set: every rank runs forward (no dropout, no saved
// activations, the training precision policy) on its contiguous slice, then the per-example
// results are gathered so that every rank computes the same metrics.
//
// The metrics follow what Hugging Face's example scripts report for each task, under the same
// names (metrics.jsonl prefixes them with "eval_" / "test_"):
//   kSingleLabel  accuracy, macro_f1, roc_auc (two labels only)      run_glue / run_classification
//   kRegression   mse, pearson, spearmanr (omitted when undefined)   run_glue on STS-B
//   kPerToken     precision, recall, f1 (entity level, seqeval's      run_ner
//                 default rules), accuracy (over labelled words)
// The loss is the mean over the data's loss terms: examples, or labelled words for kPerToken
// (label-smoothed as in training when EvalSettings::label_smoothing > 0).
#ifndef XLMR_FRAMEWORK_TRAIN_EVALUATE_H_
#define XLMR_FRAMEWORK_TRAIN_EVALUATE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/data/tokenized_dataset.h"
#include "framework/distributed/communicator.h"
#include "framework/profile/window_recorder.h"
#include "framework/train/model_interface.h"
#include "framework/train/objective.h"

namespace xlmr::train {

struct EvalSettings {
  int64_t batch_size = 32;  // also --per_device_eval_batch_size's default (recipes/common_flags.cc)
  DType autocast = DType::kF32;  // PassContext::autocast, the training run's
  int32_t pad_id = 1;
  Device device = Device::kCpu;
  Objective objective = Objective::kSingleLabel;
  // --label_smoothing_factor: the loss is the smoothed one, as HF's evaluation loop computes it
  // through the same LabelSmoother as training (metrics read the predictions, unaffected).
  double label_smoothing = 0.0;
  // --padding_free: batches are packed (data::CollatePacked) where the model takes packed
  // inputs (TrainableModel::TakesPackedInputs), else padded; the predictions are the same up to
  // rounding.
  bool padding_free = true;
  // The tokenizer's segment separator when the model reads token types (data::Collate), else -1.
  int32_t segment_separator_id = -1;
  // xlmr_predict --profile_steps over question-answering windows: each forward batch is a step
  // of this recorder (not owned; null: no profile).
  profile::WindowRecorder* profiler = nullptr;
};

// Writes an evaluation's files into `directory` (which exists) and returns their names there;
// errors name the file.
using WriteEvalFilesFn = std::function<absl::StatusOr<std::vector<std::string>>(const std::string& directory)>;

struct EvalResult {
  double loss = 0;       // mean loss over the loss terms
  int64_t examples = 0;
  // The task's figures in report order, named as above.
  std::vector<std::pair<std::string, double>> metrics;
  // The files this evaluation leaves in the final output directory, null for none (question
  // answering: run_qa's prediction files). The Trainer calls it for its final evaluations only
  // (the eval data's last and the test data's), on rank 0, before eval_results.json, and lists
  // the names in manifest.json; an intermediate evaluation's is dropped unwritten.
  WriteEvalFilesFn write_files;
  // The figure named `name`, or nullopt.
  std::optional<double> Metric(const std::string& name) const;
};

// What the evaluators share: log(sum(exp(row[0..n)))) in double, stable; and the examples
// [begin, end) of `n` that `comm`'s rank evaluates (contiguous slices in rank order).
double LogSumExp(const float* row, int n);
std::pair<int64_t, int64_t> RankSlice(int64_t n, const distributed::Communicator& comm);

// The figures an evaluation under `objective` can report besides the loss, in report order
// (roc_auc only with two labels; pearson and spearmanr only when defined).
std::vector<std::string> ReportedMetricNames(Objective objective);

// Per-example outputs of a forward pass.
struct Prediction {
  std::vector<double> logits;         // kSingleLabel: [L]; kRegression: [1], the prediction
  int32_t label = 0;                  // kSingleLabel: the argmax (a tie goes to the first)
  std::vector<double> probabilities;  // kSingleLabel: softmax of the logits
  // kPerToken: the argmax label id of each word whose first sub-token the example kept, in
  // word order (data::TokenizedDataset::word_index), and the sum of the (label-smoothed)
  // cross-entropy terms of the example's labelled tokens (0 when the data has no labels).
  std::vector<int32_t> word_labels;
  double token_loss_sum = 0;
};

// Forward over examples [begin, end) of `dataset` in batches; no metrics, no communication.
std::vector<Prediction> Predict(TrainableModel& model, const data::TokenizedDataset& dataset,
                                int64_t begin, int64_t end, const EvalSettings& settings);

// [in] label_names: the run's labels in id order (the tags of the entity metrics of kPerToken).
EvalResult Evaluate(TrainableModel& model, const data::TokenizedDataset& dataset,
                    const std::vector<std::string>& label_names, distributed::Communicator& comm,
                    const EvalSettings& settings);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_EVALUATE_H_
