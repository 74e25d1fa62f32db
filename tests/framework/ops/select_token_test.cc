#include "framework/ops/select_token.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using testing::HalfBits;
using testing::RandomValues;
using testing::TensorFrom;

// Data movement only, so every check is exact (no tolerance).
TEST(SelectFirstTokenTest, PicksTokenZeroOfEverySequence) {
  const int64_t batch = 3, seq = 4, hidden = 5;
  const std::vector<float> x = RandomValues(batch * seq * hidden, 41);
  const Tensor y = ops::SelectFirstToken(TensorFrom({batch, seq, hidden}, DType::kF32, x));
  ASSERT_EQ(y.shape(), (Shape{batch, hidden}));
  const std::vector<float> values = y.ToFloatVector();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < hidden; ++h) {
      EXPECT_EQ(values[b * hidden + h], x[b * seq * hidden + h]) << "b " << b << " h " << h;
    }
  }
}

TEST(SelectFirstTokenTest, BackwardScattersIntoTokenZeroOnly) {
  const int64_t batch = 2, seq = 3, hidden = 4;
  const std::vector<float> dy = RandomValues(batch * hidden, 42);
  const Tensor dx = ops::SelectFirstTokenBackward(TensorFrom({batch, hidden}, DType::kF32, dy),
                                                  {batch, seq, hidden});
  ASSERT_EQ(dx.shape(), (Shape{batch, seq, hidden}));
  const std::vector<float> values = dx.ToFloatVector();
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < seq; ++s) {
      for (int64_t h = 0; h < hidden; ++h) {
        const float expected = s == 0 ? dy[b * hidden + h] : 0.0f;
        EXPECT_EQ(values[(b * seq + s) * hidden + h], expected) << b << "," << s << "," << h;
      }
    }
  }
}

TEST(SelectFirstTokenTest, HalfIsCopiedBitForBitBothWays) {
  const Tensor x = TensorFrom({2, 1, 3}, DType::kF16, {1.0f / 3, -70000.0f, 1e-6f, 5, 6, 7});
  const Tensor y = ops::SelectFirstToken(x);  // one token per sequence: y is all of x
  ASSERT_EQ(y.dtype(), DType::kF16);
  EXPECT_EQ(HalfBits(y), HalfBits(x));  // including the -inf from the overflow and a subnormal
  const Tensor dx = ops::SelectFirstTokenBackward(y, {2, 1, 3});
  ASSERT_EQ(dx.dtype(), DType::kF16);
  EXPECT_EQ(HalfBits(dx), HalfBits(x));
}

TEST(SelectFirstTokenDeathTest, RejectsEmptySequencesAndMismatchedGradients) {
  EXPECT_DEATH(ops::SelectFirstToken(Tensor::Zeros({2, 0, 3}, DType::kF32)), "S >= 1");
  EXPECT_DEATH(ops::SelectFirstTokenBackward(Tensor::Zeros({2, 4}, DType::kF32), {2, 5, 3}),
               "dy must have shape");
}

}  // namespace
}  // namespace xlmr
