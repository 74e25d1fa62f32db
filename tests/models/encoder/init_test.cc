// Random initialisation as HF's _init_weights: N(0, initializer_range) weights, zero biases,
// unit LayerNorm weights, zeroed padding rows; deterministic in the seed.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "models/encoder/init.h"
#include "tests/testing/tiny_xlmr.h"

namespace xlmr::models {
namespace {

TEST(InitTest, FollowsHuggingFaceRulesAndIsDeterministic) {
  testing::TinyModelOptions options;
  options.initializer_range = 0.02;
  EncoderModel a(testing::TinyXlmrConfig(options), Device::kCpu);
  EncoderModel b(testing::TinyXlmrConfig(options), Device::kCpu);
  EncoderModel c(testing::TinyXlmrConfig(options), Device::kCpu);
  InitializeAllWeights(a, 42);
  InitializeAllWeights(b, 42);
  InitializeAllWeights(c, 43);
  EXPECT_EQ(a.parameters().master().ToFloatVector(), b.parameters().master().ToFloatVector());
  EXPECT_NE(a.parameters().master().ToFloatVector(), c.parameters().master().ToFloatVector());

  const ParameterStore& store = a.parameters();
  double sum = 0, sum_squares = 0;
  int64_t count = 0;
  for (int p = 0; p < store.size(); ++p) {
    const std::string& name = store.spec(p).name;
    const std::vector<float> values = store.param(p).ToFloatVector();
    const bool bias = name.size() > 5 && name.substr(name.size() - 5) == ".bias";
    if (bias) {
      for (float v : values) EXPECT_EQ(v, 0.0f) << name;
    } else if (name.find("LayerNorm") != std::string::npos) {
      for (float v : values) EXPECT_EQ(v, 1.0f) << name;
    } else {
      for (float v : values) {
        sum += v;
        sum_squares += double{v} * v;
        ++count;
      }
    }
  }
  // Mean within 4 standard errors of 0; standard deviation within 5% of 0.02 (thousands of
  // samples; the padding rows' zeros pull it down by under 2%).
  const double mean = sum / count;
  const double stddev = std::sqrt(sum_squares / count - mean * mean);
  EXPECT_LT(std::fabs(mean), 4 * 0.02 / std::sqrt(static_cast<double>(count)));
  EXPECT_NEAR(stddev, 0.02, 0.001);
  for (const char* table : {"roberta.embeddings.word_embeddings.weight",
                            "roberta.embeddings.position_embeddings.weight"}) {
    const Tensor row = store.param(store.Find(table)).Slice(1, 2);  // pad_token_id = 1
    for (float v : row.ToFloatVector()) EXPECT_EQ(v, 0.0f) << table;
  }
}

TEST(InitTest, FreshHeadRedrawsTheHeadAndLeavesTheBackboneAlone) {
  EncoderModel model(testing::TinyXlmrConfig(), Device::kCpu);
  InitializeAllWeights(model, 1);
  const std::vector<float> before = model.parameters().master().ToFloatVector();
  InitializeHead(model, 2);
  const ParameterStore& store = model.parameters();
  for (int p = 0; p < store.size(); ++p) {
    const bool head = store.spec(p).name.rfind("classifier.", 0) == 0;
    const std::vector<float> now = store.param(p).ToFloatVector();
    const std::vector<float> old(before.begin() + store.range(p).offset,
                                 before.begin() + store.range(p).offset + store.range(p).size);
    if (!head) {
      EXPECT_EQ(now, old) << store.spec(p).name;
    } else if (store.spec(p).name.find(".weight") != std::string::npos) {
      // Redrawn from the new seed (its distribution: parity_test's FreshHead test).
      EXPECT_NE(now, old) << store.spec(p).name << " was not re-initialised";
    }
  }
}

}  // namespace
}  // namespace xlmr::models
