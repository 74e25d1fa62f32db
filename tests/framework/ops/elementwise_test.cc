#include "framework/ops/elementwise.h"

#include <cmath>
#include <vector>

#include "framework/tensor/half.h"
#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using testing::HalfBits;
using testing::RandomValues;
using testing::RoundedToHalf;
using testing::TensorFrom;

// Tolerance 0: Add is one IEEE fp32 addition per element followed by one rounding, so it must
// equal float addition (then FloatToHalf) bit for bit.
TEST(AddTest, IsOneFloatAdditionRoundedOnce) {
  const std::vector<float> a = RandomValues(1500, 51, -100.0f, 100.0f);  // > one 1024 chunk
  const std::vector<float> b = RoundedToHalf(RandomValues(1500, 52, -100.0f, 100.0f));
  const Tensor a32 = TensorFrom({3, 500}, DType::kF32, a);
  const Tensor b16 = TensorFrom({3, 500}, DType::kF16, b);
  const std::vector<float> sum32 = ops::Add(a32, b16, DType::kF32).ToFloatVector();
  const std::vector<uint16_t> sum16 = HalfBits(ops::Add(a32, b16, DType::kF16));
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(sum32[i], a[i] + b[i]) << i;
    ASSERT_EQ(sum16[i], FloatToHalf(a[i] + b[i]).bits) << i;
  }
}

TEST(AddTest, HalfOutputOverflowsToInfinity) {
  const Tensor a = TensorFrom({2}, DType::kF16, {60000.0f, -60000.0f});
  const Tensor b = TensorFrom({2}, DType::kF16, {10000.0f, -10000.0f});
  const std::vector<float> sum = ops::Add(a, b, DType::kF16).ToFloatVector();
  EXPECT_EQ(sum[0], INFINITY);
  EXPECT_EQ(sum[1], -INFINITY);
  EXPECT_EQ(ops::Add(a, b, DType::kF32).ToFloatVector()[0], 70000.0f);
}

// Tolerance 0: a cast is exactly one FloatToHalf (or the exact widening HalfToFloat).
TEST(CastTest, RoundsOnceAndWidensExactly) {
  const std::vector<float> values = {1.0f / 3.0f, 70000.0f, -1e-8f, 2.5f, 65519.0f};
  const Tensor x32 = TensorFrom({5}, DType::kF32, values);
  const Tensor x16 = ops::Cast(x32, DType::kF16);
  ASSERT_EQ(x16.dtype(), DType::kF16);
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(HalfBits(x16)[i], FloatToHalf(values[i]).bits);
  EXPECT_TRUE(std::isinf(x16.ToFloatVector()[1]));
  const Tensor back = ops::Cast(x16, DType::kF32);
  ASSERT_EQ(back.dtype(), DType::kF32);
  EXPECT_EQ(back.ToFloatVector(), x16.ToFloatVector());
}

// bf16 (--bf16's autocast dtype): rounded once to nearest even, 70000 stays finite (fp32's
// exponent range), widened back exactly; bf16 + f32 adds in fp32 and rounds once to bf16.
TEST(CastTest, Bf16RoundsOnceAndWidensExactly) {
  const std::vector<float> values = {1.0f / 3.0f, 70000.0f, -1e-8f, 1.0f + 1.0f / 256, 3e38f};
  const Tensor x = ops::Cast(TensorFrom({5}, DType::kF32, values), DType::kBF16);
  ASSERT_EQ(x.dtype(), DType::kBF16);
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(x.data<BFloat16>()[i].bits, FloatToBFloat16(values[i]).bits) << i;
  }
  EXPECT_EQ(x.ToFloatVector()[3], 1.0f);  // the tie goes to the even neighbour
  EXPECT_EQ(x.ToFloatVector()[1], 70144.0f);
  const Tensor back = ops::Cast(x, DType::kF32);
  EXPECT_EQ(back.ToFloatVector(), x.ToFloatVector());
  const Tensor sum = ops::Add(x, TensorFrom({5}, DType::kF32, {0, 0, 0, 1.0f / 256, 0}), DType::kBF16);
  ASSERT_EQ(sum.dtype(), DType::kBF16);
  EXPECT_EQ(sum.ToFloatVector()[3], 1.0f);  // 1 + 2^-8: the tie rounds to even again
}

TEST(CastTest, SameDTypeSharesTheInput) {
  const Tensor x = TensorFrom({2}, DType::kF32, {1.0f, 2.0f});
  const Tensor y = ops::Cast(x, DType::kF32);
  EXPECT_EQ(y.storage(), x.storage());
}

// CastInto writes into an existing buffer, e.g. the fp16 working copy of the weights.
TEST(CastTest, CastIntoWritesAViewOfAFlatBuffer) {
  Tensor flat = Tensor::Zeros({10}, DType::kF16, Device::kCpu, MemoryCategory::kWeights);
  Tensor view = flat.View(4, {2, 3});
  const std::vector<float> values = RandomValues(6, 53);
  ops::CastInto(TensorFrom({2, 3}, DType::kF32, values), &view);
  const std::vector<float> all = flat.ToFloatVector();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(all[4 + i], RoundedToHalf(values)[i]);
  EXPECT_EQ(all[3], 0.0f);  // outside the view: untouched
  EXPECT_EQ(all[0], 0.0f);
}

TEST(ElementwiseDeathTest, RejectsMismatchedShapes) {
  EXPECT_DEATH(
      ops::Add(Tensor::Zeros({2, 3}, DType::kF32), Tensor::Zeros({3, 2}, DType::kF32), DType::kF32),
      "same shape");
  EXPECT_DEATH(ops::Cast(Tensor::Zeros({2}, DType::kI32), DType::kF32), "f32, f16 or bf16");
}

}  // namespace
}  // namespace xlmr
