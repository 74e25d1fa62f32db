// Parity with Hugging Face Transformers on the CPU backend (the checks and their tolerances:
// tests/testing/hf_parity.h), and loading/saving Hugging Face model directories: the tiny
// random XLM-R of tests/golden, made by tests/golden/make_golden.py with transformers itself.
#include <algorithm>
#include <string>

#include "gtest/gtest.h"
#include "models/xlmr/hf_checkpoint.h"
#include "tests/testing/hf_parity.h"

namespace xlmr::models {
namespace {

const char* const kGoldenDir = testing::kTinyXlmrGoldenDir;

TEST(HuggingFaceParityTest, LogitsLossAndEveryGradientMatchFp32) {
  testing::ExpectHuggingFaceParity(Device::kCpu);
}

TEST(HuggingFaceParityTest, LogitsLossAndEveryGradientMatchFp16Autocast) {
  testing::ExpectHuggingFaceParity(Device::kCpu, testing::Precision::kFp16Autocast);
}

TEST(HfCheckpointTest, HubBackboneGetsAFreshHeadAndIgnoresLmHead) {
  auto classifier = LoadPretrained(std::string(kGoldenDir) + "/classifier", LoadOptions{});
  auto backbone = LoadPretrained(std::string(kGoldenDir) + "/mlm", LoadOptions{});
  ASSERT_TRUE(classifier.ok()) << classifier.status();
  ASSERT_TRUE(backbone.ok()) << backbone.status();
  EXPECT_TRUE(backbone->fresh_head);
  const ParameterStore& a = classifier->model->parameters();
  const ParameterStore& b = backbone->model->parameters();
  for (int i = 0; i < a.size(); ++i) {
    if (a.spec(i).name.rfind("classifier.", 0) == 0) {
      const std::vector<float> head = b.param(i).ToFloatVector();
      if (a.spec(i).name.find("bias") != std::string::npos) {
        EXPECT_TRUE(std::all_of(head.begin(), head.end(), [](float v) { return v == 0.0f; }));
      }
      continue;
    }
    EXPECT_EQ(a.param(i).ToFloatVector(), b.param(i).ToFloatVector()) << a.spec(i).name;
  }
}

TEST(HfCheckpointTest, OtherLabelsGiveAFreshHeadOfTheRightSize) {
  LoadOptions options;
  options.labels = std::vector<std::string>{"neg", "pos"};
  auto loaded = LoadPretrained(std::string(kGoldenDir) + "/classifier", options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->fresh_head);
  const ParameterStore& store = loaded->model->parameters();
  EXPECT_EQ(store.spec(store.Find("classifier.out_proj.weight")).shape, (Shape{2, 24}));
}

TEST(HfCheckpointTest, SaveThenLoadRoundTripsEveryParameter) {
  auto loaded = LoadPretrained(std::string(kGoldenDir) + "/classifier", LoadOptions{});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::string out = ::testing::TempDir() + "/saved_model";
  ASSERT_TRUE(SavePretrained(*loaded->model, out).ok());
  auto reloaded = LoadPretrained(out, LoadOptions{});
  ASSERT_TRUE(reloaded.ok()) << reloaded.status();
  EXPECT_FALSE(reloaded->fresh_head);
  EXPECT_EQ(reloaded->model->config().id2label, loaded->model->config().id2label);
  EXPECT_EQ(reloaded->model->parameters().master().ToFloatVector(),
            loaded->model->parameters().master().ToFloatVector());
}

TEST(HfCheckpointTest, CanonicalNamesAcceptOldAndUnprefixedNames) {
  EXPECT_EQ(CanonicalTensorName("embeddings.LayerNorm.gamma"), "roberta.embeddings.LayerNorm.weight");
  EXPECT_EQ(CanonicalTensorName("roberta.encoder.layer.3.output.LayerNorm.beta"),
            "roberta.encoder.layer.3.output.LayerNorm.bias");
  EXPECT_EQ(CanonicalTensorName("lm_head.dense.weight"), "");
  EXPECT_EQ(CanonicalTensorName("roberta.pooler.dense.weight"), "");
  EXPECT_EQ(CanonicalTensorName("roberta.embeddings.position_ids"), "");
  EXPECT_EQ(CanonicalTensorName("classifier.dense.bias"), "classifier.dense.bias");
}

}  // namespace
}  // namespace xlmr::models
