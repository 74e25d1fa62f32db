// EvaluateQa on a model whose logits are fixed by the tokens (FixedSpanModel), over windows a
// one-token-per-character tokenizer makes, so that the answers, scores and loss are worked out
// by hand:
//
//   example  context    gold     the model's span      v1 EM  v1 F1   v2 answer
//   e0       abXcdYef   XcdY     X..Y = "XcdY"         1      1       "XcdY"
//   e1       XabcY      abc      "XabcY"               0      0       "XabcY"
//   e2       abcd       (none)   -                     -      -       "" (null: <s> scores 6)
//
// Start logits: 4 on 'X', end logits: 4 on 'Y', 3 on <s> (both) in a window without 'X',
// 0 elsewhere. Tolerance 1e-9: the loss is a few float32 logits through double log/exp.
#include "framework/train/qa_evaluate.h"

#include <cmath>
#include <string>
#include <vector>

#include "framework/data/qa_dataset.h"
#include "framework/distributed/local_communicator.h"
#include "gtest/gtest.h"

namespace xlmr::train {
namespace {

constexpr int32_t kX = 50, kY = 51;

int32_t IdOf(char c) { return c == 'X' ? kX : c == 'Y' ? kY : 10 + (c % 30); }

std::vector<int32_t> CharTokens(const std::string& text, std::vector<data::TextSpan>* spans) {
  std::vector<int32_t> ids;
  spans->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == ' ') continue;
    ids.push_back(IdOf(text[i]));
    spans->push_back({static_cast<int64_t>(i), static_cast<int64_t>(i + 1)});
  }
  return ids;
}

class FixedSpanModel : public TrainableModel {
 public:
  FixedSpanModel() : store_({{"w", {1}, false, 0}}, Device::kCpu) {}
  ParameterStore& parameters() override { return store_; }
  int num_blocks() const override { return 0; }
  void SetRecomputePlan(recompute::RecomputePlan) override {}
  recompute::PassMemory MeasurePassMemory(const recompute::BatchShape&, const PassContext&) override { return {}; }
  Tensor Forward(const ModelInputs& inputs, const PassContext& context, bool) override {
    EXPECT_FALSE(context.training);
    const int64_t b_size = inputs.input_ids.dim(0), s_size = inputs.input_ids.dim(1);
    const int32_t* ids = inputs.input_ids.data<int32_t>();
    std::vector<float> values(2 * b_size * s_size, 0.0f);
    for (int64_t b = 0; b < b_size; ++b) {
      bool has_x = false;
      for (int64_t s = 0; s < s_size; ++s) {
        const int32_t id = ids[b * s_size + s];
        // The question's tokens come first: only the context holds X and Y.
        if (id == kX) values[b * s_size + s] = 4, has_x = true;
        if (id == kY) values[(b_size + b) * s_size + s] = 4;
      }
      if (!has_x) values[b * s_size] = values[(b_size + b) * s_size] = 3;
    }
    Tensor logits = Tensor::Zeros({2, b_size, s_size}, DType::kF32);
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

data::QaExample Example(std::string id, std::string context, std::string answer) {
  data::QaExample e;
  e.id = std::move(id);
  e.question = "q";
  e.context = std::move(context);
  e.where = "qa.jsonl";
  if (!answer.empty()) {
    const auto at = static_cast<int64_t>(e.context.find(answer));
    e.answers.push_back({answer, at, at});
  }
  return e;
}

struct Fixture {
  std::vector<data::QaExample> examples;
  std::vector<data::QaFeature> features;
  data::TokenizedDataset windows;
};

Fixture Make(std::vector<data::QaExample> examples) {
  data::QaFeatureOptions options;
  options.max_seq_length = 64;
  options.doc_stride = 8;
  auto features = data::PrepareQaFeatures(examples, CharTokens, options);
  EXPECT_TRUE(features.ok()) << features.status();
  data::TokenizedDataset windows = data::MakeQaDataset("qa.jsonl", examples, *features);
  return {std::move(examples), std::move(*features), std::move(windows)};
}

// -log softmax at `label` of a window of n logits: `high` at one position, 0 elsewhere.
double Nll(int n, double high, bool label_is_high) {
  return std::log(std::exp(high) + (n - 1)) - (label_is_high ? high : 0.0);
}

TEST(QaEvaluateTest, SquadV1ScoresAndLossByHand) {
  const Fixture f = Make({Example("e0", "abXcdYef", "XcdY"), Example("e1", "XabcY", "abc")});
  FixedSpanModel model;
  distributed::LocalCommunicator comm;
  QaPostprocessOptions options;
  for (const int64_t batch_size : {1, 2}) {  // batch 2 pads the shorter window: no effect
    EvalSettings settings;
    settings.batch_size = batch_size;
    const QaEvalResult out = EvaluateQa(model, {&f.examples, &f.features, &f.windows}, comm,
                                        settings, options);
    ASSERT_EQ(out.predictions.size(), 2u);
    EXPECT_EQ(out.predictions[0].answer, "XcdY");
    EXPECT_EQ(out.predictions[1].answer, "XabcY");
    ASSERT_EQ(out.result.metrics.size(), 2u);
    EXPECT_EQ(out.result.metrics[0].first, "exact_match");
    EXPECT_NEAR(out.result.metrics[0].second, 50.0, 1e-9);
    EXPECT_EQ(out.result.metrics[1].first, "f1");
    EXPECT_NEAR(out.result.metrics[1].second, 50.0, 1e-9);
    EXPECT_EQ(out.result.examples, 2);
    // Windows: <s> q </s></s> + context + </s>: 13 and 10 tokens. e0's start label is X (its
    // high logit), end label Y; e1's labels are 'a' and 'c' (logit 0).
    const double loss = (Nll(13, 4, true) + Nll(13, 4, true) + Nll(10, 4, false) +
                         Nll(10, 4, false)) / 4;
    EXPECT_NEAR(out.result.loss, loss, 1e-9 * loss);
  }
}

TEST(QaEvaluateTest, SquadV2NullAnswerWinsWhereTheModelSaysSo) {
  const Fixture f = Make({Example("e0", "abXcdYef", "XcdY"), Example("e1", "XabcY", "abc"),
                          Example("e2", "abcd", "")});
  FixedSpanModel model;
  distributed::LocalCommunicator comm;
  QaPostprocessOptions options;
  options.version_2_with_negative = true;
  const QaEvalResult out = EvaluateQa(model, {&f.examples, &f.features, &f.windows}, comm,
                                      EvalSettings{}, options);
  ASSERT_EQ(out.predictions.size(), 3u);
  EXPECT_EQ(out.predictions[0].answer, "XcdY");
  EXPECT_EQ(out.predictions[2].answer, "");
  EXPECT_EQ(*out.predictions[2].null_odds, 6.0f);  // null 3 + 3, best span 0 + 0
  EXPECT_NEAR(out.result.Metric("exact").value(), 200.0 / 3, 1e-9);
  EXPECT_NEAR(out.result.Metric("HasAns_exact").value(), 50.0, 1e-9);
  EXPECT_NEAR(out.result.Metric("NoAns_exact").value(), 100.0, 1e-9);
  EXPECT_EQ(out.result.Metric("total").value(), 3.0);
}

// Data to predict without gold answers (xlmr_predict's input may leave "answers" out): the same
// predictions as with them, and no figures (SQuAD's are undefined without gold answers), under
// v1 and v2. v1 with an empty answer list cannot be scored either.
TEST(QaEvaluateTest, WithoutGoldAnswersPredictsAndDoesNotScore) {
  const std::vector<data::QaExample> gold = {Example("e0", "abXcdYef", "XcdY"), Example("e1", "XabcY", "abc")};
  std::vector<data::QaExample> unknown = gold;
  unknown[1].answers.clear();
  unknown[1].has_answers = false;
  EXPECT_TRUE(CanScoreQa(gold, false));
  EXPECT_FALSE(CanScoreQa(unknown, false));
  EXPECT_FALSE(CanScoreQa(unknown, true));
  std::vector<data::QaExample> unanswerable = gold;
  unanswerable[1].answers.clear();  // given, and empty: SQuAD v2's unanswerable question
  EXPECT_FALSE(CanScoreQa(unanswerable, false));
  EXPECT_TRUE(CanScoreQa(unanswerable, true));

  FixedSpanModel model;
  distributed::LocalCommunicator comm;
  for (const bool v2 : {false, true}) {
    QaPostprocessOptions options;
    options.version_2_with_negative = v2;
    const Fixture with = Make(gold);
    const Fixture without = Make(unknown);
    const QaEvalResult scored = EvaluateQa(model, {&with.examples, &with.features, &with.windows}, comm,
                                           EvalSettings{}, options);
    const QaEvalResult unscored = EvaluateQa(model, {&without.examples, &without.features, &without.windows},
                                             comm, EvalSettings{}, options);
    EXPECT_FALSE(scored.result.metrics.empty());
    EXPECT_TRUE(unscored.result.metrics.empty()) << "v2 " << v2;
    ASSERT_EQ(unscored.predictions.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(unscored.predictions[i].answer, scored.predictions[i].answer);
      EXPECT_EQ(unscored.predictions[i].nbest.size(), scored.predictions[i].nbest.size());
    }
  }
}

}  // namespace
}  // namespace xlmr::train
