// framework/train/in_batch_negatives.h against sentence-transformers: its
// MultipleNegativesRankingLoss (defaults) on the embeddings of tests/golden/sentence_embedding
// (make_sentence_embedding_golden.py), for pairs and triplets, mean and cls pooling: the loss
// and its gradient with respect to every embedding.
//
// Tolerances, relative to the largest magnitude of the reference: loss 1e-6, gradients 1e-5.
// Both sides are fp32 with other summation orders and the scale applied at another point (here
// before the product), a few ulps of the scores; the gradients pass through the softmax and two
// normalisations. A wrong candidate set (negatives dropped, anchors among the candidates), a
// missing normalisation or a wrong scale moves the loss by O(0.1).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "framework/io/safetensors.h"
#include "framework/train/in_batch_negatives.h"
#include "gtest/gtest.h"

namespace xlmr::train {
namespace {

const char kGolden[] = "tests/golden/sentence_embedding/golden.safetensors";
constexpr int64_t kRows = 3;

Tensor Golden(const io::SafetensorsFile& file, const std::string& name) {
  absl::StatusOr<Tensor> t = io::ToTensor(file, name);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

Tensor Targets(int64_t n) {
  Tensor t = Tensor::Zeros({n}, DType::kI32);
  for (int64_t i = 0; i < n; ++i) t.data<int32_t>()[i] = static_cast<int32_t>(i);
  return t;
}

double Largest(const std::vector<float>& values) {
  double largest = 0;
  for (float v : values) largest = std::max(largest, std::fabs(static_cast<double>(v)));
  return largest;
}

class InBatchNegativesTest : public ::testing::TestWithParam<std::string> {};

TEST_P(InBatchNegativesTest, LossAndGradientEqualSentenceTransformers) {
  absl::StatusOr<io::SafetensorsFile> file = io::ReadSafetensors(kGolden);
  ASSERT_TRUE(file.ok()) << file.status();
  const std::string mode = GetParam().substr(0, GetParam().find('_'));
  const int64_t columns = GetParam().find("triplets") != std::string::npos ? 3 : 2;
  const Tensor all = Golden(*file, "embeddings/" + mode);
  const Tensor embeddings = all.Slice(0, columns * kRows);
  const Tensor targets = Targets(kRows);

  const ops::LossSum loss = InBatchNegativesLoss(embeddings, targets, kDefaultSimilarityScale);
  ASSERT_EQ(loss.count, kRows);
  const double expected_loss = Golden(*file, "loss/" + GetParam()).ToFloatVector()[0];
  EXPECT_NEAR(loss.sum / loss.count, expected_loss, 1e-6 * std::max(1.0, std::fabs(expected_loss)));

  Tensor totals = Tensor::Zeros({2}, DType::kI64);
  AccumulateInBatchNegativesLoss(embeddings, targets, kDefaultSimilarityScale, totals, 1);
  EXPECT_EQ(reinterpret_cast<const double*>(totals.data<int64_t>())[1], loss.sum);

  // sentence-transformers differentiates the mean: a gradient scale of 1/N gives its gradient.
  const std::vector<float> got =
      InBatchNegativesBackward(embeddings, targets, kDefaultSimilarityScale, 1.0f / kRows).ToFloatVector();
  const std::vector<float> expected = Golden(*file, "d_embeddings/" + GetParam()).ToFloatVector();
  ASSERT_EQ(got.size(), expected.size());
  const double bound = 1e-5 * Largest(expected);
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - expected[i]));
    EXPECT_NEAR(got[i], expected[i], bound) << "element " << i;
  }
  std::printf("measured %s: loss %.3g, worst gradient %.3g of the largest\n", GetParam().c_str(),
              std::fabs(loss.sum / loss.count - expected_loss), worst / Largest(expected));
}

INSTANTIATE_TEST_SUITE_P(Golden, InBatchNegativesTest,
                         ::testing::Values("mean_pairs", "mean_triplets", "cls_pairs", "cls_triplets"));

TEST(InBatchNegativesDeathTest, RejectsPartialColumns) {
  EXPECT_DEATH(InBatchNegativesLoss(Tensor::Zeros({5, 4}, DType::kF32), Targets(2), 20.0f), "whole");
  EXPECT_DEATH(InBatchNegativesLoss(Tensor::Zeros({2, 4}, DType::kF32), Targets(2), 20.0f), "positive");
}

}  // namespace
}  // namespace xlmr::train
