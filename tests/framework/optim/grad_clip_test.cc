#include "framework/optim/grad_clip.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace xlmr::optim {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// Runfiles-relative; written by testdata/make_grad_clip_golden.py with
// torch.nn.utils.clip_grad_norm_ on the CPU.
const char kGolden[] = "tests/framework/optim/testdata/grad_clip_golden.json";

int64_t UlpDistance(float a, float b) {
  auto ordered = [](float x) {
    int32_t bits;
    std::memcpy(&bits, &x, sizeof(bits));
    return bits < 0 ? static_cast<int64_t>(INT32_MIN) - bits : static_cast<int64_t>(bits);
  };
  return std::llabs(ordered(a) - ordered(b));
}

Tensor FromFloats(const std::vector<float>& values) {
  Tensor t = Tensor::Zeros({static_cast<int64_t>(values.size())}, DType::kF32, Device::kCpu,
                           MemoryCategory::kGradients);
  t.CopyFromFloats(values);
  return t;
}

std::vector<float> Floats(const json& values) {
  std::vector<float> result;
  for (const json& v : values) result.push_back(static_cast<float>(v.get<double>()));
  return result;
}

// torch's norm accumulates 56 squares in float32 (a few ulps of error); ours is exact to
// about 1e-15, so the two agree within 2 float ulps. The clip factor inherits at most that,
// plus the final product's rounding: 3 ulps on the clipped gradients.
TEST(GradClipTest, MatchesTorchClipGradNorm) {
  std::ifstream file(kGolden);
  ASSERT_TRUE(file.good()) << kGolden;
  const json golden = json::parse(file);
  ASSERT_EQ(golden.at("cases").size(), 3u);
  for (const json& c : golden.at("cases")) {
    const double max_norm = c.at("max_norm");
    SCOPED_TRACE(max_norm);
    Tensor grads = FromFloats(Floats(c.at("grads")));
    const double norm = GlobalL2Norm(grads);
    EXPECT_LE(UlpDistance(static_cast<float>(norm), c.at("total_norm").get<float>()), 2);
    ClipGradNorm(grads, norm, max_norm);
    const std::vector<float> ours = grads.ToFloatVector();
    const std::vector<float> torch_clipped = Floats(c.at("clipped"));
    ASSERT_EQ(ours.size(), torch_clipped.size());
    for (size_t i = 0; i < ours.size(); ++i) {
      EXPECT_LE(UlpDistance(ours[i], torch_clipped[i]), 3) << i;
    }
  }
}

TEST(GradClipTest, NormOfAPythagoreanTripleIsExact) {
  EXPECT_EQ(GlobalL2Norm(FromFloats({3.0f, 0.0f, -4.0f})), 5.0);
  EXPECT_EQ(GlobalL2Norm(FromFloats(std::vector<float>(1 << 20, 0.5f))), 512.0);
  EXPECT_EQ(GlobalL2Norm(FromFloats({})), 0.0);
}

// 1 + 1000 squares of 1e-4: each 1e-8 is below half a float32 ulp of 1, so a float32
// accumulator would return exactly 1. Double keeps them (1e-15 relative tolerance: double
// rounding over 1001 additions).
TEST(GradClipTest, NormAccumulatesInDouble) {
  std::vector<float> values(1001, 1e-4f);
  values[0] = 1.0f;
  const double small = static_cast<double>(1e-4f);
  const double expected = std::sqrt(1.0 + 1000.0 * small * small);
  EXPECT_NEAR(GlobalL2Norm(FromFloats(values)), expected, 1e-15);
  EXPECT_GT(GlobalL2Norm(FromFloats(values)), 1.000004);
}

// grad_clip.h's order, written out: blocks of 2^15 elements, each in 8 interleaved double
// partial sums combined pairwise, block sums added in block order. The values span ten orders
// of magnitude, so another order (a plain running sum, blocks added as threads finish) gives
// other bits; the check below that the running sum differs shows the data can tell.
double DocumentedSumOfSquares(const std::vector<float>& values) {
  constexpr size_t kBlock = size_t{1} << 15;
  double sum = 0.0;
  for (size_t first = 0; first < values.size(); first += kBlock) {
    double lanes[8] = {};
    const size_t end = std::min(values.size(), first + kBlock);
    for (size_t i = first; i < end; ++i) {
      const double value = values[i];
      lanes[(i - first) % 8] += value * value;
    }
    sum += ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
           ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
  }
  return sum;
}

TEST(GradClipTest, NormSumsInItsDocumentedOrder) {
  std::mt19937 random(3);
  std::uniform_real_distribution<float> exponent(-8.0f, 2.0f);
  for (size_t n : {size_t{5}, size_t{1} << 15, (size_t{3} << 15) + 11}) {
    SCOPED_TRACE(n);
    std::vector<float> values(n);
    for (float& v : values) v = std::pow(10.0f, exponent(random)) * (random() % 2 ? 1.0f : -1.0f);
    const double documented = DocumentedSumOfSquares(values);
    EXPECT_EQ(GlobalL2Norm(FromFloats(values)), std::sqrt(documented));
    if (n > 1000) {
      double running = 0.0;
      for (float v : values) running += static_cast<double>(v) * v;
      EXPECT_NE(running, documented) << "these values cannot tell summation orders apart";
    }
  }
}

// Clipping multiplies every element, whichever CPU thread its part ran on.
TEST(GradClipTest, ClipsEveryElementOfALargeBuffer) {
  std::vector<float> values((size_t{3} << 15) + 7);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 1.0f + static_cast<float>(i % 97);
  Tensor grads = FromFloats(values);
  ClipGradNorm(grads, 1e4, 1.0);
  const float coefficient = ClipCoefficient(1e4, 1.0);
  const std::vector<float> clipped = grads.ToFloatVector();
  for (size_t i = 0; i < values.size(); ++i) {
    ASSERT_EQ(clipped[i], values[i] * coefficient) << i;
  }
}

TEST(GradClipTest, NonFiniteGradientsGiveANonFiniteNorm) {
  EXPECT_TRUE(std::isinf(GlobalL2Norm(FromFloats({1.0f, INFINITY}))));
  EXPECT_TRUE(std::isnan(GlobalL2Norm(FromFloats({NAN, 1.0f}))));
}

// Norm 5, max 1: factor float(1 / (5 + 1e-6)) * 1, exactly what torch computes in float32.
TEST(GradClipTest, ClipsWithTorchsFloatArithmetic) {
  Tensor grads = FromFloats({3.0f, -4.0f});
  ClipGradNorm(grads, 5.0, 1.0);
  const float coefficient = 1.0f / (5.0f + 1e-6f);
  EXPECT_EQ(ClipCoefficient(5.0, 1.0), coefficient);
  EXPECT_EQ(grads.ToFloatVector(), (std::vector<float>{3.0f * coefficient, -4.0f * coefficient}));
  EXPECT_NEAR(GlobalL2Norm(grads), 1.0, 1e-6);
}

TEST(GradClipTest, LeavesGradientsAloneWhenWithinTheBoundOrDisabled) {
  const std::vector<float> values = {0.3f, -0.4f};
  Tensor grads = FromFloats(values);
  ClipGradNorm(grads, 0.5, 1.0);  // factor 1 / 0.500001 > 1: clamped to 1
  EXPECT_EQ(grads.ToFloatVector(), values);
  ClipGradNorm(grads, 0.5, 0.0);  // --max_grad_norm 0 disables
  EXPECT_EQ(grads.ToFloatVector(), values);
  EXPECT_EQ(ClipCoefficient(1e30, 0.0), 1.0f);
  EXPECT_EQ(ClipCoefficient(1e30, -1.0), 1.0f);
}

TEST(GradClipTest, ValidationNamesTheFlag) {
  EXPECT_TRUE(ValidateMaxGradNorm(0.0).ok());
  EXPECT_TRUE(ValidateMaxGradNorm(1.0).ok());
  EXPECT_THAT(ValidateMaxGradNorm(-1.0).message(),
              HasSubstr("--max_grad_norm must be a finite number >= 0"));
  EXPECT_FALSE(ValidateMaxGradNorm(INFINITY).ok());
  EXPECT_FALSE(ValidateMaxGradNorm(NAN).ok());
}

}  // namespace
}  // namespace xlmr::optim
