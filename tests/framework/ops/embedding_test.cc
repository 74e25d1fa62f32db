#include "framework/ops/embedding.h"

#include <cmath>
#include <vector>

#include "framework/tensor/half.h"
#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using testing::HalfBits;
using testing::MaxNormalisedError;
using testing::RandomValues;
using testing::TensorFrom;

Tensor Ids(const Shape& shape, const std::vector<int32_t>& values) {
  Tensor ids = Tensor::Zeros(shape, DType::kI32);
  for (size_t i = 0; i < values.size(); ++i) ids.data<int32_t>()[i] = values[i];
  return ids;
}

// Tolerance 0: a lookup copies table rows (rounded once to fp16 for an f16 output).
TEST(EmbeddingTest, CopiesTableRows) {
  const std::vector<float> table = RandomValues(5 * 3, 61, -2.0f, 2.0f);
  const Tensor table_t = TensorFrom({5, 3}, DType::kF32, table);
  const Tensor ids = Ids({2, 2}, {4, 0, 4, 2});
  const Tensor out32 = ops::Embedding(table_t, ids, DType::kF32);
  const Tensor out16 = ops::Embedding(table_t, ids, DType::kF16);
  ASSERT_EQ(out32.shape(), (Shape{2, 2, 3}));
  const std::vector<float> values = out32.ToFloatVector();
  const std::vector<uint16_t> halves = HalfBits(out16);
  const int rows[] = {4, 0, 4, 2};
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(values[i * 3 + j], table[rows[i] * 3 + j]);
      EXPECT_EQ(halves[i * 3 + j], FloatToHalf(table[rows[i] * 3 + j]).bits);
    }
  }
}

TEST(EmbeddingTest, HalfOutputOverflowsToInfinity) {
  const Tensor table = TensorFrom({1, 2}, DType::kF32, {1e5f, -1.0f});
  const std::vector<float> out = ops::Embedding(table, Ids({1}, {0}), DType::kF16).ToFloatVector();
  EXPECT_TRUE(std::isinf(out[0]));
  EXPECT_EQ(out[1], -1.0f);
}

// The gradient of sum(dy * table[ids]) with respect to the table, in double: each occurrence
// of an id adds its dy row (repeated ids sum). Tolerance 1e-6: fp32 sums of <= 3 O(1) terms.
TEST(EmbeddingTest, BackwardSumsRowsPerIdAndSkipsPadding) {
  const int64_t vocab = 6, width = 4, padding_idx = 1;
  const std::vector<int32_t> id_values = {3, 1, 3, 0, 5, 3, 1};
  const std::vector<float> dy = RandomValues(7 * width, 62);
  const std::vector<float> initial = RandomValues(vocab * width, 63);
  Tensor dtable = TensorFrom({vocab, width}, DType::kF32, initial);
  ops::EmbeddingBackward(TensorFrom({7, width}, DType::kF32, dy), Ids({7}, id_values), padding_idx,
                         &dtable);
  std::vector<double> expected(initial.begin(), initial.end());  // += onto what was there
  for (size_t i = 0; i < id_values.size(); ++i) {
    if (id_values[i] == padding_idx) continue;
    for (int64_t j = 0; j < width; ++j) expected[id_values[i] * width + j] += dy[i * width + j];
  }
  EXPECT_LE(MaxNormalisedError(dtable.ToFloatVector(), expected), 1e-6);
  for (int64_t j = 0; j < width; ++j) {
    EXPECT_EQ(dtable.ToFloatVector()[padding_idx * width + j], initial[padding_idx * width + j]);
  }
}

TEST(EmbeddingTest, NegativePaddingIdxMeansEveryRowGetsGradient) {
  Tensor dtable = Tensor::Zeros({2, 1}, DType::kF32);
  ops::EmbeddingBackward(TensorFrom({2, 1}, DType::kF16, {0.5f, 2.0f}), Ids({2}, {0, 1}), -1,
                         &dtable);
  EXPECT_EQ(dtable.ToFloatVector(), (std::vector<float>{0.5f, 2.0f}));
}

TEST(EmbeddingDeathTest, RejectsIdsOutsideTheVocabulary) {
  const Tensor table = Tensor::Zeros({4, 2}, DType::kF32);
  EXPECT_DEATH(ops::Embedding(table, Ids({2}, {1, 4}), DType::kF32), "embedding id 4");
  EXPECT_DEATH(ops::Embedding(table, Ids({1}, {-1}), DType::kF32), "embedding id -1");
}

}  // namespace
}  // namespace xlmr
