// Parity with Hugging Face Transformers: the tiny random XLMRobertaForSequenceClassification
// of tests/golden (made by tests/golden/make_golden.py with transformers itself) must give
// the same logits, loss and parameter gradients for the same inputs (fp32, dropout off).
//
// Tolerances: logits 1e-5 and gradients 1e-4 relative to the largest magnitude of the
// reference tensor. Both sides compute in fp32 but sum in different orders (OpenBLAS vs
// PyTorch's kernels), so bitwise equality is not expected; 1e-5 is ~100 fp32 ulps of the
// output scale, and gradients pass through twice as many reductions. The key projection's
// bias has an analytically zero gradient (softmax is invariant to adding q.b_k to every score
// of a row), so both sides hold rounding noise near 1e-7: we check that ours is that small
// (<= 1e-6 of the largest gradient in the model) instead of comparing noise with noise.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "framework/io/safetensors.h"
#include "framework/ops/loss.h"
#include "gtest/gtest.h"
#include "models/xlmr/hf_checkpoint.h"

namespace xlmr::models {
namespace {

const char kGoldenDir[] = "tests/golden/tiny_xlmr";

// An I64 tensor of the golden file as an i32 tensor (ids and labels are small).
Tensor ReadInt64AsInt32(const io::SafetensorsFile& file, const std::string& name) {
  const io::SafetensorsTensor* t = file.Find(name);
  EXPECT_NE(t, nullptr) << name;
  EXPECT_EQ(t->dtype, "I64");
  Tensor out = Tensor::Zeros(t->shape, DType::kI32);
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t value;
    std::memcpy(&value, t->bytes.data() + 8 * i, sizeof value);
    out.data<int32_t>()[i] = static_cast<int32_t>(value);
  }
  return out;
}

// max |actual - expected| / max(max |expected|, floor).
double RelativeError(const std::vector<float>& actual, const std::vector<float>& expected,
                     double floor = 1e-30) {
  double max_diff = 0, max_ref = floor;
  for (size_t i = 0; i < expected.size(); ++i) {
    max_diff = std::max(max_diff, std::fabs(double{actual[i]} - expected[i]));
    max_ref = std::max(max_ref, std::fabs(double{expected[i]}));
  }
  return max_diff / max_ref;
}

class HuggingFaceParityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto golden = io::ReadSafetensors(std::string(kGoldenDir) + "/golden.safetensors");
    ASSERT_TRUE(golden.ok()) << golden.status();
    golden_ = std::make_unique<io::SafetensorsFile>(std::move(*golden));
    auto loaded = LoadPretrained(std::string(kGoldenDir) + "/classifier", LoadOptions{});
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    ASSERT_FALSE(loaded->fresh_head);
    model_ = std::move(loaded->model);
    inputs_.input_ids = ReadInt64AsInt32(*golden_, "input_ids");
    inputs_.attention_mask = ReadInt64AsInt32(*golden_, "attention_mask");
    labels_ = ReadInt64AsInt32(*golden_, "labels");
  }

  std::vector<float> Golden(const std::string& name) {
    auto t = io::ToTensor(*golden_, name);
    EXPECT_TRUE(t.ok()) << t.status();
    return t->ToFloatVector();
  }

  std::unique_ptr<io::SafetensorsFile> golden_;
  std::unique_ptr<XlmrForSequenceClassification> model_;
  ModelInputs inputs_;
  Tensor labels_;
};

TEST_F(HuggingFaceParityTest, LogitsLossAndEveryGradientMatchFp32) {
  ForwardContext context;  // eval: dropout off, fp32
  const Tensor logits = model_->Forward(inputs_, context, /*keep_activations=*/true);
  const double logits_error = RelativeError(logits.ToFloatVector(), Golden("logits"));
  EXPECT_LE(logits_error, 1e-5);

  const ops::LossSum loss = ops::CrossEntropyLoss(logits, labels_);
  const double mean_loss = loss.sum / static_cast<double>(loss.count);
  const double golden_loss = Golden("loss")[0];
  EXPECT_LE(std::fabs(mean_loss - golden_loss) / golden_loss, 1e-5);

  const Tensor d_logits = ops::CrossEntropyBackward(logits, labels_, 1.0f / static_cast<float>(loss.count));
  std::vector<int> buckets;
  model_->Backward(d_logits, context, [&](int bucket) { buckets.push_back(bucket); });
  const int num_buckets = model_->num_blocks() + 2;
  ASSERT_EQ(static_cast<int>(buckets.size()), num_buckets);
  for (int i = 0; i < num_buckets; ++i) EXPECT_EQ(buckets[i], i) << "buckets complete in order";

  const ParameterStore& store = model_->parameters();
  double largest_gradient = 0;
  for (int i = 0; i < store.size(); ++i) {
    for (float g : Golden("grad/" + store.spec(i).name)) {
      largest_gradient = std::max(largest_gradient, std::fabs(double{g}));
    }
  }
  double worst = 0;
  std::string worst_name;
  for (int i = 0; i < store.size(); ++i) {
    const std::string& name = store.spec(i).name;
    const std::vector<float> ours = store.grad(i).ToFloatVector();
    if (name.find("attention.self.key.bias") != std::string::npos) {
      for (float g : ours) EXPECT_LE(std::fabs(g), 1e-6 * largest_gradient) << name;
      continue;
    }
    const double error = RelativeError(ours, Golden("grad/" + name));
    EXPECT_LE(error, 1e-4) << name;
    if (error > worst) worst = error, worst_name = name;
  }
  std::printf("parity: logits rel err %.3g, loss %.9g vs %.9g, worst grad rel err %.3g (%s)\n",
              logits_error, mean_loss, golden_loss, worst, worst_name.c_str());
}

TEST_F(HuggingFaceParityTest, PaddingRowsOfEmbeddingsGetNoGradient) {
  ForwardContext context;
  const Tensor logits = model_->Forward(inputs_, context, true);
  model_->Backward(ops::CrossEntropyBackward(logits, labels_, 1.0f), context, [](int) {});
  const ParameterStore& store = model_->parameters();
  const int pad = static_cast<int>(model_->config().pad_token_id);
  for (const char* name : {"roberta.embeddings.word_embeddings.weight",
                           "roberta.embeddings.position_embeddings.weight"}) {
    const Tensor grad = store.grad(store.Find(name));
    const std::vector<float> row = grad.Slice(pad, pad + 1).ToFloatVector();
    EXPECT_TRUE(std::all_of(row.begin(), row.end(), [](float v) { return v == 0.0f; })) << name;
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
