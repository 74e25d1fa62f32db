// The sentence-embedding model (Task::kSentenceEmbedding: the base model under
// sentence-transformers' Pooling) against sentence-transformers itself:
// tests/golden/sentence_embedding/golden.safetensors (make_sentence_embedding_golden.py) holds
// nine sequences as three (anchor, positive, negative) rows, their embeddings under mean and
// cls pooling, and for mean pooling the gradient of every encoder parameter of
// MultipleNegativesRankingLoss. The batch goes through the trainer's collate
// (data::CollateRows: the rows' columns one after the other, padded or packed), the model's
// Forward and Backward, and the objective the trainer runs (train::Objective::kInBatchNegatives).
//
// Tolerances (the HF parity tests' fp32 bounds, tests/testing/hf_parity.h): embeddings 1e-5 of
// their largest magnitude (fp32 on both sides, other summation orders; the mean divides once),
// gradients 1e-4 of each tensor's largest (twice the reductions, then the loss's). The key
// projection's bias has an analytically zero gradient (softmax ignores a constant added to a
// row's scores), so both sides hold rounding noise: ours must be below 1e-6 of the largest
// gradient in the model, as in the HF parity tests. The pooler, which sentence embeddings never
// read, must get exactly zero gradient.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "framework/data/column_collate.h"
#include "framework/io/safetensors.h"
#include "framework/train/model_inputs.h"
#include "framework/train/objective.h"
#include "gtest/gtest.h"
#include "models/encoder/hf_checkpoint.h"

namespace xlmr::models {
namespace {

const char kGolden[] = "tests/golden/sentence_embedding/golden.safetensors";
const char kModelDir[] = "tests/golden/tiny_xlmr/classifier";
constexpr int64_t kRows = 3, kColumns = 3;

std::vector<float> Golden(const io::SafetensorsFile& file, const std::string& name) {
  absl::StatusOr<Tensor> t = io::ToTensor(file, name);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t->ToFloatVector() : std::vector<float>();
}

// The golden sequences as a dataset of their real tokens (the I64 ids, padding dropped), which
// is what the data layer gives the trainer: column by column.
data::TokenizedDataset GoldenSequences(const io::SafetensorsFile& file) {
  const io::SafetensorsTensor* ids = file.Find("input_ids");
  const io::SafetensorsTensor* mask = file.Find("attention_mask");
  EXPECT_TRUE(ids != nullptr && mask != nullptr && ids->dtype == "I64" && mask->dtype == "I64");
  const int64_t sequences = ids->shape[0], length = ids->shape[1];
  std::vector<int64_t> id_values(sequences * length), mask_values(sequences * length);
  std::memcpy(id_values.data(), ids->bytes.data(), 8 * id_values.size());
  std::memcpy(mask_values.data(), mask->bytes.data(), 8 * mask_values.size());
  data::TokenizedColumns columns;
  for (int64_t b = 0; b < sequences; ++b) {
    for (int64_t s = 0; s < length; ++s) {
      if (mask_values[b * length + s] != 0) columns.token_ids.push_back(static_cast<int32_t>(id_values[b * length + s]));
    }
    columns.offsets.push_back(static_cast<int64_t>(columns.token_ids.size()));
    columns.lines.push_back(b + 1);
    columns.label_index.push_back(-1);
  }
  return data::TokenizedDataset::FromColumns("golden", std::move(columns));
}

double Largest(const std::vector<float>& values) {
  double largest = 0;
  for (float v : values) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  return largest;
}

// max |a - b| over the largest |b|.
double WorstRelative(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - b[i]));
  }
  return worst / std::max(Largest(b), 1e-30);
}

struct Case {
  SentencePooling pooling;
  bool packed;
};

class SentenceEmbeddingParityTest : public ::testing::TestWithParam<Case> {};

TEST_P(SentenceEmbeddingParityTest, EmbeddingsAndGradientsEqualSentenceTransformers) {
  const Case c = GetParam();
  const std::string mode = c.pooling == SentencePooling::kMean ? "mean" : "cls";
  absl::StatusOr<io::SafetensorsFile> golden = io::ReadSafetensors(kGolden);
  ASSERT_TRUE(golden.ok()) << golden.status();
  LoadOptions options;
  options.task = Task::kSentenceEmbedding;
  options.pooling = c.pooling;
  absl::StatusOr<LoadedModel> loaded = LoadPretrained(kModelDir, options);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EncoderModel& model = *loaded->model;
  ASSERT_EQ(model.TakesPackedInputs(DType::kF32), true);

  const data::TokenizedDataset sequences = GoldenSequences(*golden);
  const data::Batch batch = data::CollateRows(sequences, {0, 1, 2}, data::RowLayout{kColumns}, c.packed,
                                              static_cast<int32_t>(model.config().pad_token_id));
  ASSERT_EQ(batch.loss_terms, kRows);
  train::PassContext context;  // not training: the golden's dropout is off (model.eval())
  const Tensor embeddings = model.Forward(train::ToModelInputs(batch, Device::kCpu), context, true);
  ASSERT_EQ(embeddings.shape(), (Shape{kRows * kColumns, model.config().hidden_size}));
  const double embedding_error = WorstRelative(embeddings.ToFloatVector(), Golden(*golden, "embeddings/" + mode));
  EXPECT_LE(embedding_error, 1e-5);
  std::printf("measured %s%s: embeddings %.3g", mode.c_str(), c.packed ? " packed" : "", embedding_error);
  if (c.pooling != SentencePooling::kMean) {
    std::printf("\n");
    return;
  }
  // sentence-transformers differentiates the mean over the anchors.
  const Tensor d_embeddings = train::ObjectiveBackward(train::Objective::kInBatchNegatives, embeddings,
                                                       batch.labels, 1.0f / kRows);
  model.parameters().ZeroGrads();
  model.Backward(d_embeddings, context, [](int) {});
  double worst = 0, largest_in_model = 0;
  const ParameterStore& store = model.parameters();
  for (int i = 0; i < store.size(); ++i) largest_in_model = std::max(largest_in_model, Largest(store.grad(i).ToFloatVector()));
  for (int i = 0; i < store.size(); ++i) {
    const std::string name = SavedTensorName(model.config(), store.spec(i).name);
    const std::vector<float> ours = store.grad(i).ToFloatVector();
    if (name.find("pooler.") == 0) {
      EXPECT_EQ(Largest(ours), 0.0) << name << ": the pooler is never read";
      continue;
    }
    if (name.find("attention.self.key.bias") != std::string::npos) {
      EXPECT_LE(Largest(ours), 1e-6 * largest_in_model) << name << ": zero in exact arithmetic";
      continue;
    }
    const double error = WorstRelative(ours, Golden(*golden, "grad/" + name));
    worst = std::max(worst, error);
    EXPECT_LE(error, 1e-4) << name;
  }
  std::printf(", worst gradient %.3g\n", worst);
}

INSTANTIATE_TEST_SUITE_P(Golden, SentenceEmbeddingParityTest,
                         ::testing::Values(Case{SentencePooling::kMean, false}, Case{SentencePooling::kMean, true},
                                           Case{SentencePooling::kCls, false}, Case{SentencePooling::kCls, true}));

}  // namespace
}  // namespace xlmr::models
