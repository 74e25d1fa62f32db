// framework/ops/pooling.h on the CPU against a mean the test computes itself in double.
//
// Tolerance: 1e-6 relative to the largest |x|: the op sums at most 7 floats in fp32 and divides
// once, so its error is a few float roundings (~1e-7); a wrong token set (padding counted, a
// token missed) or a wrong count moves a mean by far more than that.
#include <cmath>
#include <vector>

#include "framework/ops/pooling.h"
#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using testing::RandomValues;
using testing::TensorFrom;

constexpr double kTolerance = 1e-6;

Tensor Ids(const Shape& shape, const std::vector<int32_t>& values) {
  Tensor t = Tensor::Zeros(shape, DType::kI32);
  for (size_t i = 0; i < values.size(); ++i) t.data<int32_t>()[i] = values[i];
  return t;
}

// Right padding and one hole in the middle (the op reads the mask, not a length).
TEST(MaskedMeanPoolTest, AveragesTheMaskedTokensOnly) {
  const int64_t batch = 3, seq = 4, hidden = 5;
  const std::vector<int32_t> mask = {1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1, 0};
  const std::vector<float> x = RandomValues(batch * seq * hidden, 7);
  const Tensor y = ops::MaskedMeanPool(TensorFrom({batch, seq, hidden}, DType::kF32, x),
                                       Ids({batch, seq}, mask));
  ASSERT_EQ(y.shape(), (Shape{batch, hidden}));
  const std::vector<float> values = y.ToFloatVector();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < hidden; ++h) {
      double sum = 0;
      int count = 0;
      for (int64_t s = 0; s < seq; ++s) {
        if (mask[b * seq + s] == 0) continue;
        sum += x[(b * seq + s) * hidden + h];
        ++count;
      }
      EXPECT_NEAR(values[b * hidden + h], sum / count, kTolerance) << "b " << b << " h " << h;
    }
  }
}

TEST(MaskedMeanPoolTest, BackwardSpreadsTheGradientOverTheMaskedTokens) {
  const int64_t batch = 2, seq = 3, hidden = 2;
  const std::vector<int32_t> mask = {1, 1, 0, 1, 0, 0};
  const std::vector<float> dy = {3.0f, -6.0f, 1.5f, 2.0f};
  const Tensor dx = ops::MaskedMeanPoolBackward(TensorFrom({batch, hidden}, DType::kF32, dy),
                                                Ids({batch, seq}, mask));
  // Sequence 0 has two tokens (dy / 2 each), sequence 1 one (dy itself); padding gets 0.
  EXPECT_EQ(dx.ToFloatVector(),
            (std::vector<float>{1.5f, -3.0f, 1.5f, -3.0f, 0, 0, 1.5f, 2.0f, 0, 0, 0, 0}));
}

TEST(SegmentMeanPoolTest, EqualsTheMaskedFormOfTheSameSequences) {
  // Packed rows of sequences of 3, 1 and 2 tokens; their padded form with S = 3.
  const int64_t hidden = 4;
  const std::vector<float> packed = RandomValues(6 * hidden, 8);
  std::vector<float> padded(3 * 3 * hidden, 0.0f);
  const std::vector<std::pair<int, int>> rows_of = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {2, 0}, {2, 1}};
  for (size_t t = 0; t < rows_of.size(); ++t) {
    for (int64_t h = 0; h < hidden; ++h) {
      padded[(rows_of[t].first * 3 + rows_of[t].second) * hidden + h] = packed[t * hidden + h];
    }
  }
  const Tensor cu_seqlens = Ids({4}, {0, 3, 4, 6});
  const Tensor mask = Ids({3, 3}, {1, 1, 1, 1, 0, 0, 1, 1, 0});
  const Tensor from_packed = ops::SegmentMeanPool(TensorFrom({6, hidden}, DType::kF32, packed), cu_seqlens);
  const Tensor from_padded = ops::MaskedMeanPool(TensorFrom({3, 3, hidden}, DType::kF32, padded), mask);
  // Same tokens added in the same order: the same bits.
  EXPECT_EQ(from_packed.ToFloatVector(), from_padded.ToFloatVector());
  const std::vector<float> dy = RandomValues(3 * hidden, 9);
  const std::vector<float> d_packed =
      ops::SegmentMeanPoolBackward(TensorFrom({3, hidden}, DType::kF32, dy), cu_seqlens, 6).ToFloatVector();
  const std::vector<float> d_padded =
      ops::MaskedMeanPoolBackward(TensorFrom({3, hidden}, DType::kF32, dy), mask).ToFloatVector();
  for (size_t t = 0; t < rows_of.size(); ++t) {
    for (int64_t h = 0; h < hidden; ++h) {
      EXPECT_EQ(d_packed[t * hidden + h], d_padded[(rows_of[t].first * 3 + rows_of[t].second) * hidden + h]);
    }
  }
  // And the first sequence's mean is its three rows' mean.
  for (int64_t h = 0; h < hidden; ++h) {
    const double mean = (double{packed[h]} + packed[hidden + h] + packed[2 * hidden + h]) / 3;
    EXPECT_NEAR(from_packed.ToFloatVector()[h], mean, kTolerance);
  }
}

TEST(PoolingDeathTest, RejectsMismatchedMasks) {
  EXPECT_DEATH(ops::MaskedMeanPool(Tensor::Zeros({2, 3, 4}, DType::kF32), Tensor::Zeros({2, 4}, DType::kI32)),
               "mask");
  EXPECT_DEATH(ops::MaskedMeanPool(Tensor::Zeros({2, 3, 4}, DType::kF32), Tensor::Zeros({2, 3}, DType::kF32)),
               "i32");
}

}  // namespace
}  // namespace xlmr
