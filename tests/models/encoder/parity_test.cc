// Parity with Hugging Face Transformers on the CPU backend (the checks and their tolerances:
// tests/testing/hf_parity.h), and loading/saving Hugging Face model directories: the tiny
// random XLM-R of tests/golden, made by tests/golden/make_golden.py with transformers itself.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "models/encoder/hf_checkpoint.h"
#include "nlohmann/json.hpp"
#include "tests/testing/hf_parity.h"

namespace xlmr::models {
namespace {

const char* const kGoldenDir = testing::kTinyXlmrGoldenDir;

using models::AttentionImplementation;

TEST(HuggingFaceParityTest, LogitsLossAndEveryGradientMatchFp32) {
  testing::ExpectHuggingFaceParity(Device::kCpu, testing::Precision::kFp32, AttentionImplementation::kEager);
}

TEST(HuggingFaceParityTest, LogitsLossAndEveryGradientMatchFp16Autocast) {
  testing::ExpectHuggingFaceParity(Device::kCpu, testing::Precision::kFp16Autocast, AttentionImplementation::kEager);
}

TEST(HuggingFaceParityTest, FusedAttentionMatchesFp32) {
  testing::ExpectHuggingFaceParity(Device::kCpu, testing::Precision::kFp32, AttentionImplementation::kFused);
}

TEST(HuggingFaceParityTest, FusedAttentionMatchesSdpaUnderFp16Autocast) {
  testing::ExpectHuggingFaceParity(Device::kCpu, testing::Precision::kFp16Autocast, AttentionImplementation::kFused);
}

TEST(HuggingFaceParityTest, LogitsLossAndEveryGradientMatchBf16Autocast) {
  testing::ExpectHuggingFaceParity(Device::kCpu, testing::Precision::kBf16Autocast, AttentionImplementation::kEager);
}

TEST(HuggingFaceParityTest, FusedAttentionMatchesSdpaUnderBf16Autocast) {
  testing::ExpectHuggingFaceParity(Device::kCpu, testing::Precision::kBf16Autocast, AttentionImplementation::kFused);
}

// Heads 64 wide (kHead64GoldenDir): fused attention inside the model, in every precision, over
// two key tiles with padding, against HF's sdpa under autocast (fp32: against eager, which
// sdpa equals to fp32 rounding). The CUDA twin of each is in tests/gpu/hf_parity_test.cc.
TEST(HuggingFaceParityTest, Head64FusedAttentionMatchesEveryPrecision) {
  for (testing::Precision precision : {testing::Precision::kFp32, testing::Precision::kFp16Autocast,
                                       testing::Precision::kBf16Autocast}) {
    testing::ExpectHuggingFaceParity(Device::kCpu, precision, AttentionImplementation::kFused,
                                     testing::kHead64GoldenDir);
  }
}

// bf16 on CUDA takes eager attention (no fused bf16 kernel): its CPU twin at head_dim 64.
TEST(HuggingFaceParityTest, Head64EagerAttentionMatchesBf16Autocast) {
  testing::ExpectHuggingFaceParity(Device::kCpu, testing::Precision::kBf16Autocast,
                                   AttentionImplementation::kEager, testing::kHead64GoldenDir);
}

// --padding_free: the golden batch packed, fused attention, against the same HF results.
TEST(HuggingFaceParityTest, PackedBatchMatchesEveryPrecision) {
  for (const char* dir : {testing::kTinyXlmrGoldenDir, testing::kHead64GoldenDir}) {
    for (testing::Precision precision : {testing::Precision::kFp32, testing::Precision::kFp16Autocast,
                                         testing::Precision::kBf16Autocast}) {
      testing::ExpectHuggingFaceParity(Device::kCpu, precision, AttentionImplementation::kFused, dir,
                                       /*packed=*/true);
    }
  }
}

TEST(HuggingFaceParityTest, PackedTokenClassificationAndRegressionHeadsMatchFp32) {
  testing::ExpectHeadParity(Device::kCpu, Task::kTokenClassification, testing::HeadParityMode::kFp32Packed);
  testing::ExpectHeadParity(Device::kCpu, Task::kRegression, testing::HeadParityMode::kFp32Packed);
}

TEST(HuggingFaceParityTest, TokenClassificationHeadMatchesFp32) {
  testing::ExpectHeadParity(Device::kCpu, Task::kTokenClassification);
}

TEST(HuggingFaceParityTest, RegressionHeadMatchesFp32) {
  testing::ExpectHeadParity(Device::kCpu, Task::kRegression);
}

TEST(HuggingFaceParityTest, QuestionAnsweringHeadMatchesFp32) {
  testing::ExpectHeadParity(Device::kCpu, Task::kQuestionAnswering);
}

TEST(HuggingFaceParityTest, QuestionAnsweringHeadMatchesFp16Autocast) {
  testing::ExpectHeadParity(Device::kCpu, Task::kQuestionAnswering, testing::HeadParityMode::kFp16Autocast);
}

// --task on a directory of another task: HF's from_pretrained into another class keeps the
// backbone and initialises the new head.
TEST(HfCheckpointTest, AnotherTaskGivesItsOwnFreshHead) {
  LoadOptions options;
  options.task = Task::kTokenClassification;
  options.labels = std::vector<std::string>{"B-X", "I-X", "O"};
  auto loaded = LoadPretrained(std::string(kGoldenDir) + "/classifier", options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->fresh_head);
  const ParameterStore& store = loaded->model->parameters();
  EXPECT_EQ(store.Find("classifier.dense.weight"), -1);
  EXPECT_EQ(store.spec(store.Find("classifier.weight")).shape, (Shape{3, 24}));

  options.task = Task::kRegression;
  loaded = LoadPretrained(std::string(kGoldenDir) + "/classifier", options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->fresh_head);
  EXPECT_EQ(loaded->model->config().id2label, (std::vector<std::string>{"LABEL_0"}));
  EXPECT_EQ(loaded->model->parameters().spec(loaded->model->parameters().Find("classifier.out_proj.weight")).shape,
            (Shape{1, 24}));

  options.task = Task::kQuestionAnswering;
  options.labels.reset();
  loaded = LoadPretrained(std::string(kGoldenDir) + "/classifier", options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->fresh_head);
  EXPECT_EQ(loaded->model->config().id2label, (std::vector<std::string>{"LABEL_0", "LABEL_1"}));
  EXPECT_EQ(loaded->model->parameters().spec(loaded->model->parameters().Find("qa_outputs.weight")).shape,
            (Shape{2, 24}));
  EXPECT_EQ(loaded->model->parameters().Find("classifier.out_proj.weight"), -1);
}

// What we save for the new heads (token classification, regression, question answering) loads back as the same task with the same weights, and its
// config.json names HF's class (and problem_type for regression).
TEST(HfCheckpointTest, TokenAndRegressionHeadsRoundTrip) {
  for (const char* directory : {"token_classifier", "regressor", "qa"}) {
    auto loaded = LoadPretrained(std::string(kGoldenDir) + "/" + directory, LoadOptions{});
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_FALSE(loaded->fresh_head) << directory;
    const std::string out = ::testing::TempDir() + "/saved_" + directory;
    ASSERT_TRUE(SavePretrained(*loaded->model, out).ok());
    std::ifstream config_file(out + "/config.json");
    const nlohmann::json config = nlohmann::json::parse(config_file);
    const Task task = loaded->model->config().task;
    EXPECT_EQ(config.at("architectures"), nlohmann::json::array({ArchitectureName(XlmRobertaFamily(), task)}));
    EXPECT_EQ(config.at("problem_type"),
              task == Task::kRegression ? nlohmann::json("regression") : nlohmann::json(nullptr));
    auto reloaded = LoadPretrained(out, LoadOptions{});
    ASSERT_TRUE(reloaded.ok()) << reloaded.status();
    EXPECT_FALSE(reloaded->fresh_head);
    EXPECT_EQ(reloaded->model->config().task, task);
    EXPECT_EQ(reloaded->model->parameters().master().ToFloatVector(),
              loaded->model->parameters().master().ToFloatVector());
  }
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

// A fresh head as HF's _init_weights makes it: dense and out_proj weights ~ N(0,
// initializer_range), biases 0. The golden config's initializer_range is 0.4 and the head has
// 24*24 + 3*24 = 648 weights: the sample standard deviation has a standard error of
// 0.4 / sqrt(2 * 648) = 2.8%, so it must lie within 12% of 0.4 (over 4 standard errors), and
// the mean within 4 standard errors (0.4 / sqrt(648) = 0.016) of 0. A head left at zero, or
// drawn with std 1 (or 0.02, the hub default, instead of the config's value), fails.
TEST(HfCheckpointTest, FreshHeadIsInitialisedAsHuggingFaceDoes) {
  auto backbone = LoadPretrained(std::string(kGoldenDir) + "/mlm", LoadOptions{});
  ASSERT_TRUE(backbone.ok()) << backbone.status();
  ASSERT_TRUE(backbone->fresh_head);
  const double range = backbone->model->config().initializer_range;
  ASSERT_EQ(range, 0.4);
  const ParameterStore& store = backbone->model->parameters();
  double sum = 0, sum_squares = 0;
  int64_t count = 0;
  for (const char* name : {"classifier.dense.weight", "classifier.out_proj.weight"}) {
    const int index = store.Find(name);
    ASSERT_GE(index, 0) << name;
    std::vector<float> values = store.param(index).ToFloatVector();
    for (float v : values) {
      sum += v;
      sum_squares += double{v} * v;
      ++count;
    }
    std::sort(values.begin(), values.end());
    EXPECT_EQ(std::adjacent_find(values.begin(), values.end()), values.end())
        << name << ": repeated values (not independent draws)";
  }
  ASSERT_EQ(count, 648);
  const double mean = sum / count;
  const double stddev = std::sqrt(sum_squares / count - mean * mean);
  EXPECT_LT(std::fabs(mean), 4 * range / std::sqrt(double(count))) << "mean " << mean;
  EXPECT_NEAR(stddev, range, 0.12 * range);
  for (const char* name : {"classifier.dense.bias", "classifier.out_proj.bias"}) {
    for (float v : store.param(store.Find(name)).ToFloatVector()) EXPECT_EQ(v, 0.0f) << name;
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

// The safetensors header (8-byte little-endian length, then JSON), read without our reader, so
// that nothing lenient stands between the file and the comparison.
nlohmann::json SafetensorsHeader(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  unsigned char length_bytes[8] = {};
  in.read(reinterpret_cast<char*>(length_bytes), 8);
  EXPECT_TRUE(in.good()) << path;
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | length_bytes[i];
  std::string header(length, '\0');
  in.read(header.data(), static_cast<std::streamsize>(length));
  EXPECT_TRUE(in.good()) << path;
  return nlohmann::json::parse(header);
}

// What we save is what transformers' save_pretrained writes (tests/golden's classifier was
// written by it): the same tensor names (no gamma/beta, the roberta. prefix, no extra or
// missing tensor), shapes and dtypes, and the same __metadata__ ({"format": "pt"}, which
// from_pretrained checks). Offsets are not compared: the layout within the file is free.
TEST(HfCheckpointTest, SavedFileHasTransformersNamesShapesDtypesAndMetadata) {
  auto loaded = LoadPretrained(std::string(kGoldenDir) + "/classifier", LoadOptions{});
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  const std::string out = ::testing::TempDir() + "/saved_for_header";
  ASSERT_TRUE(SavePretrained(*loaded->model, out).ok());
  const nlohmann::json ours = SafetensorsHeader(out + "/model.safetensors");
  const nlohmann::json theirs = SafetensorsHeader(std::string(kGoldenDir) + "/classifier/model.safetensors");
  ASSERT_TRUE(theirs.contains("__metadata__"));
  EXPECT_EQ(ours.value("__metadata__", nlohmann::json()), theirs["__metadata__"]);
  std::vector<std::string> our_names, their_names;
  for (const auto& [name, entry] : ours.items()) our_names.push_back(name);
  for (const auto& [name, entry] : theirs.items()) their_names.push_back(name);
  EXPECT_EQ(our_names, their_names);  // nlohmann::json keeps keys sorted
  for (const auto& [name, entry] : theirs.items()) {
    if (name == "__metadata__" || !ours.contains(name)) continue;
    EXPECT_EQ(ours[name]["dtype"], entry["dtype"]) << name;
    EXPECT_EQ(ours[name]["shape"], entry["shape"]) << name;
  }
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
