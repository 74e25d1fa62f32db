#include "framework/train/objective.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {
namespace {

using nlohmann::json;

// Runfiles-relative; written by testdata/make_label_smoothing_golden.py with transformers'
// LabelSmoother called as the Trainer calls it.
const char kGolden[] = "tests/framework/train/testdata/label_smoothing_golden.json";

json LoadGolden() {
  std::ifstream file(kGolden);
  EXPECT_TRUE(file.good()) << kGolden;
  return json::parse(file);
}

template <typename T>
Tensor TensorOf(std::vector<int64_t> shape, DType dtype, const std::vector<T>& values) {
  Tensor t = Tensor::Zeros(shape, dtype);
  EXPECT_EQ(t.numel(), static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

struct GoldenCase {
  std::string name;
  Objective objective;
  float epsilon;
  Tensor logits;  // [rows, C] or [rows, S, C]
  Tensor labels;  // [rows] or [rows, S]
  int64_t num_items;
  std::vector<std::pair<int64_t, int64_t>> micro_batches;  // row ranges
  std::vector<double> losses;                               // HF's, one per micro-batch
  std::vector<float> grad;                                  // of their sum, shaped as logits
};

GoldenCase ReadCase(const json& c) {
  GoldenCase g;
  g.name = c.at("name");
  g.objective = c.at("objective") == "per_token" ? Objective::kPerToken : Objective::kSingleLabel;
  g.epsilon = c.at("epsilon").get<float>();
  const std::vector<int64_t> shape = c.at("logits_shape");
  g.logits = TensorOf(shape, DType::kF32, c.at("logits").get<std::vector<float>>());
  g.labels = TensorOf(std::vector<int64_t>(shape.begin(), shape.end() - 1), DType::kI32,
                      c.at("labels").get<std::vector<int32_t>>());
  g.num_items = c.at("num_items_in_batch");
  for (const json& m : c.at("micro_batches")) g.micro_batches.push_back({m.at(0), m.at(1)});
  g.losses = c.at("losses").get<std::vector<double>>();
  g.grad = c.at("grad").get<std::vector<float>>();
  return g;
}

double MaxAbs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, std::fabs(static_cast<double>(x)));
  return m;
}

// Tolerances: loss 1e-6 relative, gradient 1e-6 of the largest gradient element. Both sides
// compute log-softmax in fp32 and differ only in summation order (torch sums the uniform term
// in fp32, we in double): measured worst 5.0e-8 (loss) and 1.3e-7 (gradient). The bugs these
// guard against are of order e / C of the loss and of a gradient element (>= 1e-2 relative
// here): smoothing ignored tokens, a missing uniform term, a per-micro-batch normalisation.
TEST(ObjectiveTest, LabelSmoothingMatchesTransformersLabelSmoother) {
  const json golden = LoadGolden();
  ASSERT_EQ(golden.at("cases").size(), 5u);
  double worst_loss = 0, worst_grad = 0;
  for (const json& c : golden.at("cases")) {
    const GoldenCase g = ReadCase(c);
    SCOPED_TRACE(g.name);
    // Each micro-batch is normalised by the global batch's labelled rows, as TrainStep does.
    const float scale = static_cast<float>(1.0 / static_cast<double>(g.num_items));
    std::vector<float> grad;
    int64_t terms = 0;
    for (size_t m = 0; m < g.micro_batches.size(); ++m) {
      const auto [begin, end] = g.micro_batches[m];
      const Tensor logits = g.logits.Slice(begin, end);
      const Tensor labels = g.labels.Slice(begin, end);
      const ops::LossSum loss = ObjectiveLoss(g.objective, logits, labels, g.epsilon);
      terms += loss.count;
      const double mean = loss.sum / static_cast<double>(g.num_items);
      const double error = std::fabs(mean - g.losses[m]) / std::fabs(g.losses[m]);
      EXPECT_LE(error, 1e-6) << "micro-batch " << m << ": ours " << mean << ", HF " << g.losses[m];
      worst_loss = std::max(worst_loss, error);
      const std::vector<float> d =
          ObjectiveBackward(g.objective, logits, labels, scale, g.epsilon).ToFloatVector();
      grad.insert(grad.end(), d.begin(), d.end());
    }
    EXPECT_EQ(terms, g.num_items);
    ASSERT_EQ(grad.size(), g.grad.size());
    const double largest = MaxAbs(g.grad);
    for (size_t i = 0; i < grad.size(); ++i) {
      const double error = std::fabs(static_cast<double>(grad[i]) - g.grad[i]) / largest;
      EXPECT_LE(error, 1e-6) << "element " << i << ": ours " << grad[i] << ", HF " << g.grad[i];
      worst_grad = std::max(worst_grad, error);
    }
  }
  std::printf("worst error against the LabelSmoother of transformers %s: loss %.3g relative, gradient %.3g of "
              "the largest element\n",
              golden.at("transformers_version").get<std::string>().c_str(), worst_loss, worst_grad);
}

// A factor of 0 is the plain cross-entropy bit for bit: the default run is unchanged.
TEST(ObjectiveTest, ZeroSmoothingIsThePlainCrossEntropyBitForBit) {
  const json golden = LoadGolden();
  for (const json& c : golden.at("cases")) {
    const GoldenCase g = ReadCase(c);
    SCOPED_TRACE(g.name);
    const ops::LossSum plain = ops::CrossEntropyLoss(
        g.logits.Reshaped({g.labels.numel(), g.logits.dim(-1)}), g.labels.Reshaped({g.labels.numel()}));
    const ops::LossSum zero = ObjectiveLoss(g.objective, g.logits, g.labels, 0.0f);
    EXPECT_EQ(zero.sum, plain.sum);
    EXPECT_EQ(zero.count, plain.count);
    const std::vector<float> d_plain =
        ops::CrossEntropyBackward(g.logits.Reshaped({g.labels.numel(), g.logits.dim(-1)}),
                                  g.labels.Reshaped({g.labels.numel()}), 0.25f)
            .ToFloatVector();
    EXPECT_EQ(ObjectiveBackward(g.objective, g.logits, g.labels, 0.25f, 0.0f).ToFloatVector(), d_plain);
  }
}

}  // namespace
}  // namespace xlmr::train
