// Evaluate and Predict (framework/train/evaluate.h) on a model whose logits are fixed by a
// table (FixedLogitsModel: the token after <s> picks the row), so that the expected metrics
// are worked out by hand:
//
//   example  label  logits           softmax (p0, p1)  predicted  -log p(label)
//   0        0      (ln 3, 0)        (3/4, 1/4)        0          ln(4/3)
//   1        1      (0, ln 3)        (1/4, 3/4)        1          ln(4/3)
//   2        1      (ln 3, 0)        (3/4, 1/4)        0          ln 4
//   3        0      (0, 0)           (1/2, 1/2)        0 (ties: the first)   ln 2
//   4        1      (-ln 3, 0)       (1/4, 3/4)        1          ln(4/3)
//
//   loss = (3 ln(4/3) + ln 4 + ln 2) / 5; accuracy 4/5;
//   F1 class 0: TP 2, FP 1, FN 0 -> 4/5; class 1: TP 2, FP 0, FN 1 -> 4/5; macro 4/5;
//   ROC AUC on p1: positives {3/4, 1/4, 3/4}, negatives {1/4, 1/2}: pairs won
//     3/4 > both (x2 positives) = 4, 1/4 vs 1/4 tie = 1/2, 1/4 < 1/2 = 0 -> 4.5 / 6 = 3/4.
// Batches of 2 (so the last is short), and the same over two ranks (rank 1 of 2 gathers rank
// 0's slice [0, 2) and computes the same whole-set metrics).
// Tolerance: 1e-6 relative. The logits are fp32 (ln 3 rounded to float moves the softmax by
// ~1e-8); a metric off by one example moves it by >= 0.05.
#include "framework/train/evaluate.h"

#include <cmath>
#include <memory>
#include <vector>

#include "framework/data/label_map.h"
#include "framework/distributed/local_communicator.h"
#include "gtest/gtest.h"

namespace xlmr::train {
namespace {

const float kLn3 = std::log(3.0f);
// Row k: the logits of an example whose second token is 4 + k.
const std::vector<std::vector<float>> kLogits = {{kLn3, 0}, {0, kLn3}, {kLn3, 0}, {0, 0}, {-kLn3, 0}};
const std::vector<int> kLabels = {0, 1, 1, 0, 1};

class FixedLogitsModel : public TrainableModel {
 public:
  FixedLogitsModel() : store_({{"w", {1}, false, 0}}, Device::kCpu) {}
  ParameterStore& parameters() override { return store_; }
  int num_blocks() const override { return 0; }
  void SetRecomputePlan(recompute::RecomputePlan) override {}
  recompute::PassMemory MeasurePassMemory(const recompute::BatchShape&, const PassContext&) override { return {}; }
  Tensor Forward(const ModelInputs& inputs, const PassContext& context, bool keep_activations) override {
    EXPECT_FALSE(context.training) << "evaluation must run without dropout";
    EXPECT_FALSE(keep_activations) << "evaluation keeps no activations";
    const int64_t batch = inputs.input_ids.dim(0);
    std::vector<float> values;
    for (int64_t b = 0; b < batch; ++b) {
      const int32_t token = inputs.input_ids.data<int32_t>()[b * inputs.input_ids.dim(1) + 1];
      const std::vector<float>& row = kLogits.at(token - 4);
      values.insert(values.end(), row.begin(), row.end());
    }
    Tensor logits = Tensor::Zeros({batch, 2}, DType::kF32);
    logits.CopyFromFloats(values);
    return logits;
  }
  void Backward(const Tensor&, const PassContext&, const BucketReadyFn&) override {
    ADD_FAILURE() << "evaluation ran backward";
  }
  void ReleaseActivations() override {}

 private:
  ParameterStore store_;
};

// Example k: <s> (4 + k) [7 for odd k] </s>, label kLabels[k]; lengths differ so batches pad.
data::TokenizedDataset FixedDataset() {
  data::TokenizedColumns columns;
  columns.label_names = {"neg", "pos"};
  for (int k = 0; k < static_cast<int>(kLabels.size()); ++k) {
    columns.token_ids.insert(columns.token_ids.end(), {0, 4 + k});
    if (k % 2 == 1) columns.token_ids.push_back(7);
    columns.token_ids.push_back(2);
    columns.offsets.push_back(static_cast<int64_t>(columns.token_ids.size()));
    columns.lines.push_back(k + 2);
    columns.label_index.push_back(kLabels[k]);
  }
  data::TokenizedDataset dataset = data::TokenizedDataset::FromColumns("fixed.tsv", std::move(columns));
  absl::StatusOr<data::LabelMap> labels = data::LabelMap::FromTrainingLabels({"neg", "pos"}, "fixed.tsv");
  EXPECT_TRUE(labels.ok()) << labels.status();
  EXPECT_TRUE(dataset.AssignLabelIds(*labels).ok());
  return dataset;
}

const std::vector<std::string> kLabelNames = {"neg", "pos"};

void ExpectHandComputedMetrics(const EvalResult& result) {
  const double loss = (3 * std::log(4.0 / 3.0) + std::log(4.0) + std::log(2.0)) / 5;
  EXPECT_EQ(result.examples, 5);
  EXPECT_NEAR(result.loss, loss, 1e-6 * loss);
  ASSERT_EQ(result.metrics.size(), 3u);  // in report order
  EXPECT_EQ(result.metrics[0].first, "accuracy");
  EXPECT_EQ(result.metrics[1].first, "macro_f1");
  EXPECT_EQ(result.metrics[2].first, "roc_auc");
  EXPECT_NEAR(result.Metric("accuracy").value(), 0.8, 1e-6);
  EXPECT_NEAR(result.Metric("macro_f1").value(), 0.8, 1e-6);
  EXPECT_NEAR(result.Metric("roc_auc").value(), 0.75, 1e-6);
}

TEST(EvaluateTest, PredictGivesLogitsSoftmaxAndArgmaxPerExample) {
  FixedLogitsModel model;
  const data::TokenizedDataset dataset = FixedDataset();
  EvalSettings settings;
  settings.batch_size = 2;
  const std::vector<Prediction> predictions = Predict(model, dataset, 1, 4, settings);
  ASSERT_EQ(predictions.size(), 3u);  // examples 1, 2, 3
  EXPECT_EQ(predictions[0].label, 1);
  EXPECT_EQ(predictions[1].label, 0);
  EXPECT_EQ(predictions[2].label, 0);  // a tie goes to the first class
  EXPECT_EQ(predictions[0].logits, (std::vector<double>{0.0, double{kLn3}}));
  EXPECT_NEAR(predictions[0].probabilities[0], 0.25, 1e-7);
  EXPECT_NEAR(predictions[0].probabilities[1], 0.75, 1e-7);
  EXPECT_NEAR(predictions[2].probabilities[0], 0.5, 1e-15);
}

TEST(EvaluateTest, OneRankComputesTheHandWorkedMetrics) {
  FixedLogitsModel model;
  distributed::LocalCommunicator comm;
  EvalSettings settings;
  settings.batch_size = 2;
  ExpectHandComputedMetrics(Evaluate(model, FixedDataset(), kLabelNames, comm, settings));
}

// --label_smoothing_factor e: the loss is HF's smoothed one, (1 - e) nll + e * mean_j(-log p_j)
// per example; the mean of -log p_j is (ln(4/3) + ln 4) / 2 for the four decided examples and
// ln 2 for the tie. Predictions and the other metrics are unchanged.
TEST(EvaluateTest, LabelSmoothingSmoothsTheLossOnly) {
  FixedLogitsModel model;
  distributed::LocalCommunicator comm;
  EvalSettings settings;
  settings.batch_size = 2;
  settings.label_smoothing = 0.2;
  const EvalResult result = Evaluate(model, FixedDataset(), kLabelNames, comm, settings);
  const double nll = (3 * std::log(4.0 / 3.0) + std::log(4.0) + std::log(2.0)) / 5;
  const double uniform = (4 * (std::log(4.0 / 3.0) + std::log(4.0)) / 2 + std::log(2.0)) / 5;
  const double loss = 0.8 * nll + 0.2 * uniform;
  EXPECT_NEAR(result.loss, loss, 1e-6 * loss);
  EXPECT_NEAR(result.Metric("accuracy").value(), 0.8, 1e-6);
}

// Rank `rank` of 2 whose AllGatherDoubles puts `before` (what lower ranks sent) in front of
// its own values, and records what it sent.
class TwoRankComm : public distributed::Communicator {
 public:
  TwoRankComm(int rank, std::vector<double> before) : rank_(rank), before_(std::move(before)) {}
  int rank() const override { return rank_; }
  int world_size() const override { return 2; }
  void AllReduceSum(Tensor&) override { ADD_FAILURE() << "unexpected"; }
  void ReduceScatterSum(Tensor&, const std::vector<int64_t>&) override { ADD_FAILURE() << "unexpected"; }
  void AllGather(Tensor&, const std::vector<int64_t>&) override { ADD_FAILURE() << "unexpected"; }
  void GatherToRoot(const float*, float*, const std::vector<int64_t>&, int) override { ADD_FAILURE() << "unexpected"; }
  bool AllReduceBlocksHost() const override { return true; }
  bool AllTrue(bool value) override { return value; }
  void AllReduceSumDoubles(double*, size_t) override { ADD_FAILURE() << "unexpected"; }
  std::vector<double> AllGatherDoubles(const std::vector<double>& local) override {
    sent = local;
    std::vector<double> all = before_;
    all.insert(all.end(), local.begin(), local.end());
    return all;
  }
  void Broadcast(void*, size_t, int) override {}
  void Barrier() override {}
  [[noreturn]] void Abort(int) override { std::abort(); }
  std::vector<double> sent;

 private:
  int rank_;
  std::vector<double> before_;
};

TEST(EvaluateTest, TwoRanksEachTakeTheirSliceAndAgreeOnTheWholeSet) {
  FixedLogitsModel model;
  const data::TokenizedDataset dataset = FixedDataset();
  EvalSettings settings;
  settings.batch_size = 2;
  TwoRankComm rank0(0, {});
  Evaluate(model, dataset, kLabelNames, rank0, settings);
  // Rank 0 of 2 takes examples [0, 5*1/2) = [0, 2): 4 doubles each.
  EXPECT_EQ(rank0.sent.size(), 8u);
  TwoRankComm rank1(1, rank0.sent);
  ExpectHandComputedMetrics(Evaluate(model, dataset, kLabelNames, rank1, settings));
  EXPECT_EQ(rank1.sent.size(), 12u);  // examples [2, 5)
}

// Per-token and regression evaluation on models whose outputs are a function of the token:
//
// Per token (labels B-X 0, I-X 1, O 2): token t >= 4 gets logits 0 except ln 2 at (t - 4) % 3,
// so its prediction is (t - 4) % 3 with p = 1/2 (loss ln 2 when right, ln 4 when wrong).
//   sentence 1: <s> 4 5 9 6 </s>, words at tokens 4, 5 (with a later sub-token 9), 6;
//               tags B-X I-X O; predicted B-X I-X O (all right)
//   sentence 2: <s> 7 8 </s>, tags B-X O; predicted B-X I-X (the second word wrong)
//   entities: true {X[0..1] in 1, X[0] in 2}, predicted {X[0..1] in 1, X[0..1] in 2}: 1 of 2
//   right -> precision 1/2, recall 1/2, F1 1/2; accuracy 4 of 5 words; loss (4 ln 2 + ln 4) / 5.
// Regression: the prediction is token 4 + k's value kPredictions[k]; targets kTargets; MSE,
// Pearson (numpy corrcoef: 0.9902674083052385) and Spearman (monotone: 1).
// Tolerance 1e-6 relative, as above (fp32 logits).
class PerTokenModel : public FixedLogitsModel {
 public:
  Tensor Forward(const ModelInputs& inputs, const PassContext&, bool) override {
    const int64_t batch = inputs.input_ids.dim(0), seq = inputs.input_ids.dim(1);
    std::vector<float> values(batch * seq * 3, 0.0f);
    for (int64_t i = 0; i < batch * seq; ++i) {
      const int32_t token = inputs.input_ids.data<int32_t>()[i];
      if (token >= 4) values[i * 3 + (token - 4) % 3] = std::log(2.0f);
    }
    Tensor logits = Tensor::Zeros({batch, seq, 3}, DType::kF32);
    logits.CopyFromFloats(values);
    return logits;
  }
};

data::TokenizedDataset TaggedDataset() {
  data::TokenizedColumns columns;
  columns.offsets = {0, 6, 10};
  columns.token_ids = {0, 4, 5, 9, 6, 2, 0, 7, 8, 2};
  columns.word_index = {-1, 0, 1, -1, 2, -1, -1, 0, 1, -1};
  columns.token_label_index = {-1, 0, 1, -1, 2, -1, -1, 0, 2, -1};
  columns.label_names = {"B-X", "I-X", "O"};
  columns.lines = {1, 6};
  columns.label_index = {-1, -1};
  data::TokenizedDataset dataset = data::TokenizedDataset::FromColumns("fixed.conll", std::move(columns));
  absl::StatusOr<data::LabelMap> labels = data::LabelMap::FromId2Label({"B-X", "I-X", "O"}, "fixed.conll");
  EXPECT_TRUE(labels.ok()) << labels.status();
  EXPECT_TRUE(dataset.AssignTokenLabelIds(*labels).ok());
  return dataset;
}

TEST(EvaluateTest, PerTokenGivesEntityMetricsOverFirstSubTokens) {
  PerTokenModel model;
  distributed::LocalCommunicator comm;
  EvalSettings settings;
  settings.batch_size = 1;
  settings.objective = Objective::kPerToken;
  const data::TokenizedDataset dataset = TaggedDataset();
  const EvalResult result = Evaluate(model, dataset, {"B-X", "I-X", "O"}, comm, settings);
  EXPECT_EQ(result.examples, 2);
  const double loss = 6 * std::log(2.0) / 5;
  EXPECT_NEAR(result.loss, loss, 1e-6 * loss);
  ASSERT_EQ(result.metrics.size(), 4u);
  EXPECT_EQ(result.metrics[0].first, "precision");
  // Smoothed (e = 0.3): every labelled token's p is (1/2, 1/4, 1/4), so the mean of -log p_j
  // is (ln 2 + 2 ln 4) / 3; the unlabelled later sub-token takes no part.
  settings.label_smoothing = 0.3;
  const double smoothed = Evaluate(model, dataset, {"B-X", "I-X", "O"}, comm, settings).loss;
  EXPECT_NEAR(smoothed, 0.7 * loss + 0.3 * 5 * std::log(2.0) / 3, 1e-6 * loss);
  settings.label_smoothing = 0;
  EXPECT_NEAR(result.Metric("precision").value(), 0.5, 1e-6);
  EXPECT_NEAR(result.Metric("recall").value(), 0.5, 1e-6);
  EXPECT_NEAR(result.Metric("f1").value(), 0.5, 1e-6);
  EXPECT_NEAR(result.Metric("accuracy").value(), 0.8, 1e-6);

  const std::vector<Prediction> predictions = Predict(model, dataset, 0, 2, settings);
  EXPECT_EQ(predictions[0].word_labels, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(predictions[1].word_labels, (std::vector<int32_t>{0, 1}));
}

const std::vector<float> kPredictions = {1.5f, 2.0f, 3.0f, 4.0f};
const std::vector<std::string> kTargets = {"1", "2", "3", "5"};

class RegressionModel : public FixedLogitsModel {
 public:
  Tensor Forward(const ModelInputs& inputs, const PassContext&, bool) override {
    const int64_t batch = inputs.input_ids.dim(0);
    std::vector<float> values;
    for (int64_t b = 0; b < batch; ++b) {
      values.push_back(kPredictions.at(inputs.input_ids.data<int32_t>()[b * inputs.input_ids.dim(1) + 1] - 4));
    }
    Tensor predictions = Tensor::Zeros({batch, 1}, DType::kF32);
    predictions.CopyFromFloats(values);
    return predictions;
  }
};

TEST(EvaluateTest, RegressionGivesMsePearsonAndSpearman) {
  data::TokenizedColumns columns;
  columns.label_names = {"1", "2", "3", "5"};
  for (int k = 0; k < 4; ++k) {
    columns.token_ids.insert(columns.token_ids.end(), {0, 4 + k, 2});
    columns.offsets.push_back(static_cast<int64_t>(columns.token_ids.size()));
    columns.lines.push_back(k + 2);
    columns.label_index.push_back(k);
  }
  data::TokenizedDataset dataset = data::TokenizedDataset::FromColumns("fixed.tsv", std::move(columns));
  ASSERT_TRUE(dataset.AssignRegressionTargets().ok());
  RegressionModel model;
  distributed::LocalCommunicator comm;
  EvalSettings settings;
  settings.batch_size = 3;
  settings.objective = Objective::kRegression;
  const EvalResult result = Evaluate(model, dataset, {"LABEL_0"}, comm, settings);
  EXPECT_EQ(result.examples, 4);
  EXPECT_NEAR(result.loss, 0.3125, 1e-6);
  EXPECT_NEAR(result.Metric("mse").value(), 0.3125, 1e-6);
  EXPECT_NEAR(result.Metric("pearson").value(), 0.9902674083052385, 1e-6);
  EXPECT_NEAR(result.Metric("spearmanr").value(), 1.0, 1e-6);
}

}  // namespace
}  // namespace xlmr::train
