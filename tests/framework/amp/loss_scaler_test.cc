#include "framework/amp/loss_scaler.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace xlmr::amp {
namespace {

using ::testing::HasSubstr;

// Every expectation here is exact: scales are powers of two times the factors, and
// unscaling by a power of two is exact in binary floating point.

Tensor FromFloats(const std::vector<float>& values) {
  Tensor t = Tensor::Zeros({static_cast<int64_t>(values.size())}, DType::kF32, Device::kCpu,
                           MemoryCategory::kGradients);
  t.CopyFromFloats(values);
  return t;
}

LossScalerOptions SmallInterval() {
  LossScalerOptions options;
  options.growth_interval = 3;
  return options;
}

TEST(DynamicLossScalerTest, DefaultsAreGradScalers) {
  const LossScalerOptions options;
  EXPECT_EQ(options.init_scale, 65536.0);
  EXPECT_EQ(options.growth_factor, 2.0);
  EXPECT_EQ(options.backoff_factor, 0.5);
  EXPECT_EQ(options.growth_interval, 2000);
  EXPECT_EQ(options.min_scale, 1.0);
  EXPECT_EQ(DynamicLossScaler(options, /*enabled=*/true).scale(), 65536.0f);
}

TEST(DynamicLossScalerTest, GrowsAfterExactlyTheIntervalOfFiniteSteps) {
  DynamicLossScaler scaler(SmallInterval(), /*enabled=*/true);
  ASSERT_TRUE(scaler.Update(true).ok());
  ASSERT_TRUE(scaler.Update(true).ok());
  EXPECT_EQ(scaler.scale(), 65536.0f);
  EXPECT_EQ(scaler.GetState().growth_tracker, 2);
  ASSERT_TRUE(scaler.Update(true).ok());  // the third finite step
  EXPECT_EQ(scaler.scale(), 131072.0f);
  EXPECT_EQ(scaler.GetState().growth_tracker, 0);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(scaler.Update(true).ok());
  EXPECT_EQ(scaler.scale(), 262144.0f);
}

TEST(DynamicLossScalerTest, OverflowBacksOffAndResetsTheGrowthCounter) {
  DynamicLossScaler scaler(SmallInterval(), /*enabled=*/true);
  ASSERT_TRUE(scaler.Update(true).ok());
  ASSERT_TRUE(scaler.Update(true).ok());
  ASSERT_TRUE(scaler.Update(false).ok());
  EXPECT_EQ(scaler.scale(), 32768.0f);
  EXPECT_EQ(scaler.GetState().growth_tracker, 0);
  // Two finite steps are not enough any more: the count restarted at the overflow.
  ASSERT_TRUE(scaler.Update(true).ok());
  ASSERT_TRUE(scaler.Update(true).ok());
  EXPECT_EQ(scaler.scale(), 32768.0f);
  ASSERT_TRUE(scaler.Update(true).ok());
  EXPECT_EQ(scaler.scale(), 65536.0f);
}

TEST(DynamicLossScalerTest, NeverGrowsPastFloat32) {
  LossScalerOptions options;
  options.init_scale = 0x1.0p127;
  options.growth_interval = 1;
  DynamicLossScaler scaler(options, /*enabled=*/true);
  ASSERT_TRUE(scaler.Update(true).ok());
  EXPECT_EQ(scaler.scale(), 0x1.0p127f);  // 2^128 is inf in float32: kept
  EXPECT_EQ(scaler.GetState().growth_tracker, 0);
}

TEST(DynamicLossScalerTest, FallingBelowMinScaleIsAnError) {
  LossScalerOptions options;
  options.init_scale = 4.0;
  DynamicLossScaler scaler(options, /*enabled=*/true);
  ASSERT_TRUE(scaler.Update(false).ok());  // 2
  ASSERT_TRUE(scaler.Update(false).ok());  // 1: at min_scale, still allowed
  EXPECT_EQ(scaler.scale(), 1.0f);
  const absl::Status status = scaler.Update(false);  // 0.5
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(),
              HasSubstr("fp16 loss scale fell below --loss_scale_min (1) after 3 consecutive "
                        "overflows: the gradients are inf/nan even at scale 1;"));
  EXPECT_EQ(scaler.scale(), 0.5f);
}

TEST(DynamicLossScalerTest, AFiniteStepResetsTheOverflowCount) {
  DynamicLossScaler scaler(SmallInterval(), /*enabled=*/true);
  ASSERT_TRUE(scaler.Update(false).ok());
  ASSERT_TRUE(scaler.Update(false).ok());
  EXPECT_EQ(scaler.GetState().consecutive_overflows, 2);
  ASSERT_TRUE(scaler.Update(true).ok());
  EXPECT_EQ(scaler.GetState().consecutive_overflows, 0);
}

TEST(DynamicLossScalerTest, UnscaleByAPowerOfTwoIsExact) {
  LossScalerOptions options;
  options.init_scale = 1024.0;
  DynamicLossScaler scaler(options, /*enabled=*/true);
  const std::vector<float> truth = {1.5f, -3.25e-7f, 0.0f, -0.0f, 6.0e4f, 1e-30f};
  std::vector<float> scaled;
  for (float v : truth) scaled.push_back(v * 1024.0f);
  Tensor grads = FromFloats(scaled);
  EXPECT_TRUE(scaler.UnscaleAndCheckFinite(grads));
  EXPECT_EQ(grads.ToFloatVector(), truth);
}

// A scale that is not a power of two: the multiplier is float(1 / double(scale)), as torch.
TEST(DynamicLossScalerTest, UnscaleUsesTheDoubleReciprocalRoundedToFloat) {
  LossScalerOptions options;
  options.init_scale = 3.0;
  options.min_scale = 0.0;
  DynamicLossScaler scaler(options, /*enabled=*/true);
  Tensor grads = FromFloats({7.0f});
  EXPECT_TRUE(scaler.UnscaleAndCheckFinite(grads));
  EXPECT_EQ(grads.ToFloatVector()[0], 7.0f * static_cast<float>(1.0 / 3.0));
}

TEST(DynamicLossScalerTest, DetectsInfAndNanAnywhere) {
  const DynamicLossScaler scaler(LossScalerOptions{}, /*enabled=*/true);
  const DynamicLossScaler disabled(LossScalerOptions{}, /*enabled=*/false);  // only checks
  for (float bad : {INFINITY, -INFINITY, NAN}) {
    for (int position : {0, 4, 9}) {  // first, middle, last
      std::vector<float> values(10, 2.0f);
      values[position] = bad;
      Tensor grads = FromFloats(values);
      EXPECT_FALSE(scaler.UnscaleAndCheckFinite(grads)) << bad << " at " << position;
      Tensor read_only = FromFloats(values);
      EXPECT_FALSE(disabled.UnscaleAndCheckFinite(read_only)) << bad << " at " << position;
    }
  }
  const std::vector<float> largest = {3.4028235e38f, -3.4028235e38f, 1e-45f};
  Tensor finite = FromFloats(largest);
  EXPECT_TRUE(scaler.UnscaleAndCheckFinite(finite));
}

// The checks run in parts on the CPU threads (32768 elements each): a bad value in any part,
// the vector body or the tail of one, is found, and every element is unscaled.
TEST(DynamicLossScalerTest, DetectsInfAndNanInEveryPartOfALargeBuffer) {
  LossScalerOptions options;
  options.init_scale = 4.0;
  const DynamicLossScaler scaler(options, /*enabled=*/true);
  const DynamicLossScaler disabled(options, /*enabled=*/false);  // only checks
  const int64_t n = 3 * 32768 + 5;
  std::vector<float> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>(i % 1000);
  Tensor good = FromFloats(values);
  EXPECT_TRUE(disabled.UnscaleAndCheckFinite(good));
  EXPECT_TRUE(scaler.UnscaleAndCheckFinite(good));
  const std::vector<float> unscaled = good.ToFloatVector();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(unscaled[i], values[i] * 0.25f) << i;
  for (int64_t position : {int64_t{0}, int64_t{32767}, int64_t{32768}, int64_t{70001}, n - 1}) {
    std::vector<float> bad = values;
    bad[position] = NAN;
    Tensor grads = FromFloats(bad);
    EXPECT_FALSE(scaler.UnscaleAndCheckFinite(grads)) << "NaN at " << position;
    Tensor read_only = FromFloats(bad);
    EXPECT_FALSE(disabled.UnscaleAndCheckFinite(read_only)) << "NaN at " << position;
  }
}

TEST(DynamicLossScalerTest, DisabledScalerOnlyChecksFiniteness) {
  DynamicLossScaler scaler(LossScalerOptions{}, /*enabled=*/false);
  EXPECT_EQ(scaler.scale(), 1.0f);
  const std::vector<float> values = {0.1f, -7.0f};
  Tensor grads = FromFloats(values);
  EXPECT_TRUE(scaler.UnscaleAndCheckFinite(grads));
  EXPECT_EQ(grads.ToFloatVector(), values);
  Tensor bad = FromFloats({0.1f, NAN});
  EXPECT_FALSE(scaler.UnscaleAndCheckFinite(bad));
  for (int i = 0; i < 40; ++i) ASSERT_TRUE(scaler.Update(false).ok());
  EXPECT_EQ(scaler.scale(), 1.0f);
  ASSERT_TRUE(scaler.RestoreState({512.0f, 5, 0}).ok());
  EXPECT_EQ(scaler.scale(), 1.0f);
}

TEST(DynamicLossScalerTest, StateRoundTripsThroughACheckpoint) {
  DynamicLossScaler saved(SmallInterval(), /*enabled=*/true);
  ASSERT_TRUE(saved.Update(false).ok());
  ASSERT_TRUE(saved.Update(true).ok());
  ASSERT_TRUE(saved.Update(true).ok());
  const LossScalerState state = saved.GetState();
  EXPECT_EQ(state.scale, 32768.0f);
  EXPECT_EQ(state.growth_tracker, 2);

  DynamicLossScaler resumed(SmallInterval(), /*enabled=*/true);
  ASSERT_TRUE(resumed.RestoreState(state).ok());
  EXPECT_EQ(resumed.scale(), 32768.0f);
  ASSERT_TRUE(saved.Update(true).ok());
  ASSERT_TRUE(resumed.Update(true).ok());
  EXPECT_EQ(resumed.scale(), saved.scale());  // both grew on the same step
  EXPECT_EQ(resumed.scale(), 65536.0f);

  EXPECT_THAT(resumed.RestoreState({0.0f, 0, 0}).message(),
              HasSubstr("scale must be a finite number > 0"));
  EXPECT_THAT(resumed.RestoreState({NAN, 0, 0}).message(), HasSubstr("scale"));
  EXPECT_THAT(resumed.RestoreState({1.0f, -1, 0}).message(), HasSubstr("growth_tracker"));
  EXPECT_EQ(resumed.scale(), 65536.0f);  // unchanged by the rejected states
}

TEST(DynamicLossScalerTest, ValidationNamesTheFlag) {
  EXPECT_TRUE(ValidateLossScalerOptions({}).ok());
  auto with = [](auto edit) {
    LossScalerOptions options;
    edit(options);
    return std::string(ValidateLossScalerOptions(options).message());
  };
  EXPECT_THAT(with([](LossScalerOptions& o) { o.init_scale = 0.0; }),
              HasSubstr("--loss_scale_init must be a finite number > 0"));
  EXPECT_THAT(with([](LossScalerOptions& o) { o.init_scale = 1e39; }),
              HasSubstr("--loss_scale_init"));  // inf in float32
  EXPECT_THAT(with([](LossScalerOptions& o) { o.init_scale = NAN; }),
              HasSubstr("--loss_scale_init"));
  EXPECT_THAT(with([](LossScalerOptions& o) { o.growth_factor = 1.0; }),
              HasSubstr("--loss_scale_growth_factor must be a finite number > 1; got 1"));
  EXPECT_THAT(with([](LossScalerOptions& o) { o.backoff_factor = 1.0; }),
              HasSubstr("--loss_scale_backoff_factor must be in (0, 1); got 1"));
  EXPECT_THAT(with([](LossScalerOptions& o) { o.backoff_factor = 0.0; }),
              HasSubstr("--loss_scale_backoff_factor"));
  EXPECT_THAT(with([](LossScalerOptions& o) { o.growth_interval = 0; }),
              HasSubstr("--loss_scale_growth_interval must be >= 1; got 0"));
  EXPECT_THAT(with([](LossScalerOptions& o) { o.min_scale = 1e6; }),
              HasSubstr("--loss_scale_min must be a finite number >= 0 and at most "
                        "--loss_scale_init (65536); got 1e+06"));
  // Bad values are reported even without --fp16.
  EXPECT_THAT(with([](LossScalerOptions& o) { o.growth_interval = -5; }),
              HasSubstr("--loss_scale_growth_interval"));
}

}  // namespace
}  // namespace xlmr::amp
