// ops::Linear with an f16 bias (what the model passes under fp16: autocast's fp16-rounded bias,
// the store's fp16 working copy) gives exactly the result of the same values as an f32 bias:
// f16 -> f32 is exact, so the bias added in fp32 is the same number. Bit-for-bit, both outputs.
#include <random>
#include <vector>

#include "framework/ops/linear.h"
#include "gtest/gtest.h"

namespace xlmr {
namespace {

Tensor Random(const Shape& shape, DType dtype, std::mt19937* rng) {
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> values(static_cast<size_t>(NumElements(shape)));
  for (float& v : values) v = uniform(*rng);
  Tensor t = Tensor::Zeros(shape, dtype);
  t.CopyFromFloats(values);  // rounds once to dtype
  return t;
}

TEST(LinearF16BiasTest, SameBitsAsTheWidenedF32Bias) {
  std::mt19937 rng(7);
  const Tensor x = Random({2, 5, 24}, DType::kF16, &rng);
  const Tensor weight = Random({40, 24}, DType::kF16, &rng);
  const Tensor half_bias = Random({40}, DType::kF16, &rng);
  Tensor widened = Tensor::Zeros({40}, DType::kF32);
  widened.CopyFromFloats(half_bias.ToFloatVector());
  for (DType out : {DType::kF16, DType::kF32}) {
    const std::vector<float> with_half = ops::Linear(x, weight, half_bias, out).ToFloatVector();
    const std::vector<float> with_f32 = ops::Linear(x, weight, widened, out).ToFloatVector();
    EXPECT_EQ(with_half, with_f32) << DTypeName(out) << " output";
    // The bias is really added: without it the result differs.
    EXPECT_NE(ops::Linear(x, weight, Tensor(), out).ToFloatVector(), with_half);
  }
}

}  // namespace
}  // namespace xlmr
