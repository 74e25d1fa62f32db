// Which parameters get weight decay, as Hugging Face Trainer decides it
// (get_decay_parameter_names: everything except biases and the weights of LayerNorm modules;
// the embedding tables and the classifier's weights are decayed), both in the layout's flags
// and in what AdamW does with them: with zero gradients an AdamW step changes a parameter only
// through decay, so decayed parameters become exactly p * float(1 - lr * weight_decay) and the
// others keep their bits. Tolerance: none (one multiplication, compared bit for bit).
#include <string>
#include <vector>

#include "framework/optim/adamw.h"
#include "gtest/gtest.h"
#include "models/encoder/init.h"
#include "tests/testing/tiny_xlmr.h"

namespace xlmr::models {
namespace {

// HF's rule, from the name alone (our names are HF's): no decay for "bias" or LayerNorm.
bool HuggingFaceDecays(const std::string& name) {
  return name.find("bias") == std::string::npos && name.find("LayerNorm") == std::string::npos;
}

TEST(WeightDecayTest, LayoutFlagsFollowHuggingFaceTrainer) {
  EncoderModel model(testing::TinyXlmrConfig(), Device::kCpu);
  const ParameterStore& store = model.parameters();
  int decayed = 0;
  for (int p = 0; p < store.size(); ++p) {
    EXPECT_EQ(store.spec(p).weight_decay, HuggingFaceDecays(store.spec(p).name)) << store.spec(p).name;
    decayed += store.spec(p).weight_decay ? 1 : 0;
  }
  // 3 embedding tables + 6 Linear weights per block (q, k, v, attention output, intermediate,
  // output) x 2 blocks + the head's dense and out_proj.
  EXPECT_EQ(decayed, 3 + 6 * 2 + 2);
  for (const char* name : {"roberta.embeddings.word_embeddings.weight", "classifier.out_proj.weight"}) {
    EXPECT_TRUE(store.spec(store.Find(name)).weight_decay) << name;
  }
  for (const char* name : {"roberta.encoder.layer.0.output.LayerNorm.weight", "classifier.dense.bias"}) {
    EXPECT_FALSE(store.spec(store.Find(name)).weight_decay) << name;
  }
}

TEST(WeightDecayTest, AdamWDecaysExactlyTheFlaggedParameters) {
  EncoderModel model(testing::TinyXlmrConfig(), Device::kCpu);
  InitializeAllWeights(model, 5);
  ParameterStore& store = model.parameters();
  // LayerNorm weights start at 1 and biases at 0: give every parameter a non-zero value so
  // that a decay applied where it should not be shows.
  std::vector<float> values = store.master().ToFloatVector();
  for (size_t i = 0; i < values.size(); ++i) values[i] += 0.5f + 0.001f * static_cast<float>(i % 97);
  store.master().CopyFromFloats(values);
  store.ZeroGrads();
  optim::AdamWOptions options;
  options.weight_decay = 0.1;
  optim::AdamW adamw(store, options);
  const double lr = 0.5;
  adamw.Step(lr);
  const float factor = static_cast<float>(1.0 - lr * options.weight_decay);
  for (int p = 0; p < store.size(); ++p) {
    const FlatRange range = store.range(p);
    const std::vector<float> now = store.param(p).ToFloatVector();
    const bool decays = HuggingFaceDecays(store.spec(p).name);
    for (int64_t i = 0; i < range.size; ++i) {
      const float before = values[range.offset + i];
      const float expected = decays ? before * factor : before;
      ASSERT_EQ(now[i], expected) << store.spec(p).name << "[" << i << "]"
                                  << (decays ? ": not decayed" : ": decayed but should not be");
    }
  }
}

}  // namespace
}  // namespace xlmr::models
