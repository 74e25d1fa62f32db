#include "framework/ops/dropout.h"

#include <cmath>
#include <vector>

#include "framework/random/philox.h"
#include "framework/tensor/half.h"
#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using testing::HalfBits;
using testing::RandomValues;
using testing::RoundedToHalf;
using testing::TensorFrom;

const DropoutKey kKey{2024, 17, 1, 5, 2};

std::vector<bool> KeptElements(const Tensor& y) {
  std::vector<bool> kept;
  for (float v : y.ToFloatVector()) kept.push_back(v != 0.0f);
  return kept;
}

// Tolerance 0: each output is exactly x * float(1 / (1 - p)) (one fp32 multiply) where the
// documented Philox rule keeps the element, and exactly 0 elsewhere.
TEST(DropoutTest, FollowsTheDocumentedMaskAndScale) {
  const float p = 0.3f;
  const std::vector<float> x = RandomValues(2 * 1030, 71, 0.5f, 1.5f);  // never 0
  const std::vector<float> y =
      ops::Dropout(TensorFrom({2, 1030}, DType::kF32, x), p, kKey).ToFloatVector();
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  for (size_t i = 0; i < x.size(); ++i) {
    const bool keep = DropoutUniform(kKey, static_cast<int64_t>(i)) >= p;
    ASSERT_EQ(y[i], keep ? x[i] * scale : 0.0f) << i;
  }
}

TEST(DropoutTest, SameKeySameMaskAndEveryKeyFieldChangesIt) {
  const Tensor x = TensorFrom({64, 16}, DType::kF32, std::vector<float>(1024, 1.0f));
  const std::vector<bool> mask = KeptElements(ops::Dropout(x, 0.5f, kKey));
  EXPECT_EQ(KeptElements(ops::Dropout(x, 0.5f, kKey)), mask);
  std::vector<DropoutKey> others(5, kKey);
  others[0].seed += 1;
  others[1].step += 1;
  others[2].micro_step += 1;
  others[3].layer += 1;
  others[4].op += 1;
  for (const DropoutKey& other : others)
    EXPECT_NE(KeptElements(ops::Dropout(x, 0.5f, other)), mask);
}

// The number of kept elements is Binomial(n, 1 - p): with n = 2^18 its standard deviation is
// sqrt(n p (1 - p)); 4 sigma bounds catch a wrong comparison or threshold (which moves the
// rate by far more) while a correct generator stays inside with probability > 0.9999.
TEST(DropoutTest, KeepRateIsWithinFourSigma) {
  const int64_t n = int64_t{1} << 18;
  const Tensor x = TensorFrom({n}, DType::kF32, std::vector<float>(n, 1.0f));
  for (float p : {0.1f, 0.5f, 0.9f}) {
    int64_t kept = 0;
    for (bool k : KeptElements(ops::Dropout(x, p, kKey))) kept += k;
    const double sigma = std::sqrt(n * p * (1.0 - p));
    EXPECT_NEAR(static_cast<double>(kept), n * (1.0 - p), 4.0 * sigma) << "p = " << p;
  }
}

// The backward regenerates the forward's mask from the key: dx is zero exactly where y is,
// and dy * scale elsewhere.
TEST(DropoutTest, BackwardUsesTheForwardMask) {
  const float p = 0.25f;
  const Shape shape = {3, 333};
  const std::vector<float> ones(999, 1.0f);
  const std::vector<float> dy = RandomValues(999, 72, 0.5f, 1.5f);
  const std::vector<bool> mask =
      KeptElements(ops::Dropout(TensorFrom(shape, DType::kF32, ones), p, kKey));
  const std::vector<float> dx =
      ops::DropoutBackward(TensorFrom(shape, DType::kF32, dy), p, kKey).ToFloatVector();
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  for (size_t i = 0; i < dy.size(); ++i) ASSERT_EQ(dx[i], mask[i] ? dy[i] * scale : 0.0f) << i;
}

TEST(DropoutTest, ZeroProbabilityIsTheIdentityWithoutCopy) {
  const Tensor x = TensorFrom({4}, DType::kF16, {1.0f, 2.0f, 3.0f, 4.0f});
  EXPECT_EQ(ops::Dropout(x, 0.0f, kKey).storage(), x.storage());
  EXPECT_EQ(ops::DropoutBackward(x, 0.0f, kKey).storage(), x.storage());
}

// fp16: the same mask, the scaling in fp32, one rounding; a kept 60000 * 2 overflows to inf.
TEST(DropoutTest, HalfPathRoundsTheFloatResultOnceAndOverflows) {
  const Shape shape = {5, 40};
  int64_t first_kept = 0;
  while (DropoutUniform(kKey, first_kept) < 0.5f) ++first_kept;
  ASSERT_LT(first_kept, 200);
  std::vector<float> x = RoundedToHalf(RandomValues(200, 73, -3.0f, 3.0f));
  x[first_kept] = 60000.0f;
  const Tensor y16 = ops::Dropout(TensorFrom(shape, DType::kF16, x), 0.5f, kKey);
  const Tensor y32 = ops::Dropout(TensorFrom(shape, DType::kF32, x), 0.5f, kKey);
  ASSERT_EQ(y16.dtype(), DType::kF16);
  EXPECT_EQ(HalfBits(y16), HalfBits(TensorFrom(shape, DType::kF16, y32.ToFloatVector())));
  EXPECT_EQ(y16.ToFloatVector()[first_kept], INFINITY);
  EXPECT_EQ(y32.ToFloatVector()[first_kept], 120000.0f);
}

// Tolerance 0: row r's element c is exactly the flat rule at index slots[r] * width + c, so a
// row's mask follows its slot (the padding-free mask index), whatever row it occupies; rows of
// width 7 start mid-Philox-block. The same rows in another order and f16 draw the same mask.
TEST(DropoutRowsTest, RowFollowsItsSlot) {
  const float p = 0.25f;
  const int64_t width = 7;
  const std::vector<int32_t> slots = {5, 0, 12, 3, 40};
  const int64_t rows = static_cast<int64_t>(slots.size());
  const std::vector<float> x = RandomValues(rows * width, 91, 0.5f, 1.5f);  // never 0
  Tensor slot_tensor = Tensor::Zeros({rows}, DType::kI32);
  for (int64_t r = 0; r < rows; ++r) slot_tensor.data<int32_t>()[r] = slots[r];
  const Tensor y = ops::DropoutRows(TensorFrom({rows, width}, DType::kF32, x), p, kKey,
                                    slot_tensor, /*num_slots=*/41);
  const std::vector<float> values = y.ToFloatVector();
  const float scale = static_cast<float>(1.0 / (1.0 - p));
  int dropped = 0;
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < width; ++c) {
      const bool keep = DropoutUniform(kKey, slots[r] * width + c) >= p;
      dropped += keep ? 0 : 1;
      ASSERT_EQ(values[r * width + c], keep ? x[r * width + c] * scale : 0.0f) << r << " " << c;
    }
  }
  EXPECT_GT(dropped, 0);
  // The backward is the same masked scaling.
  EXPECT_EQ(ops::DropoutRowsBackward(TensorFrom({rows, width}, DType::kF32, x), p, kKey,
                                     slot_tensor, 41)
                .ToFloatVector(),
            values);
  // Slots equal to the row numbers give the flat mask of ops::Dropout.
  Tensor identity = Tensor::Zeros({rows}, DType::kI32);
  for (int64_t r = 0; r < rows; ++r) identity.data<int32_t>()[r] = static_cast<int32_t>(r);
  const Tensor xt = TensorFrom({rows, width}, DType::kF32, x);
  EXPECT_EQ(ops::DropoutRows(xt, p, kKey, identity, rows).ToFloatVector(),
            ops::Dropout(xt, p, kKey).ToFloatVector());
}

TEST(DropoutRowsDeathTest, RejectsASlotOutsideTheRange) {
  Tensor slots = Tensor::Zeros({2}, DType::kI32);
  slots.data<int32_t>()[1] = 4;
  const Tensor x = TensorFrom({2, 3}, DType::kF32, std::vector<float>(6, 1.0f));
  EXPECT_DEATH(ops::DropoutRows(x, 0.5f, kKey, slots, /*num_slots=*/4), "slot 4, outside");
}

TEST(DropoutDeathTest, RejectsProbabilityOutsideZeroToOne) {
  const Tensor x = Tensor::Zeros({2}, DType::kF32);
  EXPECT_DEATH(ops::Dropout(x, 1.0f, kKey), "p must be in");
  EXPECT_DEATH(ops::Dropout(x, -0.1f, kKey), "p must be in");
}

}  // namespace
}  // namespace xlmr
