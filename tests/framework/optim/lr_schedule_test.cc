#include "framework/optim/lr_schedule.h"

#include <cmath>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace xlmr::optim {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// Runfiles-relative; written by testdata/make_lr_schedule_golden.py with transformers'
// get_scheduler driven as the Trainer drives it.
const char kGolden[] = "tests/framework/optim/testdata/lr_schedule_golden.json";

LrSchedule Make(const std::string& type, double base_lr, int64_t total, int64_t warmup_steps,
                double warmup_ratio) {
  absl::StatusOr<LrSchedule> schedule =
      MakeLrSchedule(type, base_lr, total, warmup_steps, warmup_ratio);
  EXPECT_TRUE(schedule.ok()) << schedule.status();
  return *schedule;
}

// Both sides evaluate the same double operations in the same order; the only operation that
// could differ between libm builds is cos, hence EXPECT_DOUBLE_EQ (4 double ulps), not ==.
TEST(LrScheduleTest, MatchesTransformersSchedulers) {
  std::ifstream file(kGolden);
  ASSERT_TRUE(file.good()) << kGolden;
  const json golden = json::parse(file);
  ASSERT_EQ(golden.at("cases").size(), 11u);
  for (const json& c : golden.at("cases")) {
    const std::string type = c.at("type");
    SCOPED_TRACE(type + " total " + c.at("total_steps").dump());
    const LrSchedule schedule =
        Make(type, c.at("base_lr"), c.at("total_steps"), c.at("warmup_steps"),
             c.at("warmup_ratio"));
    if (type != "constant") {
      EXPECT_EQ(schedule.warmup_steps(), c.at("resolved_warmup_steps"));
    }
    const json& lrs = c.at("lrs");
    for (size_t i = 0; i < lrs.size(); ++i) {
      EXPECT_DOUBLE_EQ(schedule.LearningRate(static_cast<int64_t>(i) + 1), lrs[i].get<double>())
          << "step " << i + 1;
    }
  }
}

// Hand-computed: 4 warmup steps of 10, base 1.0. Step s uses lambda(s - 1).
TEST(LrScheduleTest, LinearWarmupThenDecayByHand) {
  const LrSchedule schedule = Make("linear", 1.0, 10, 4, 0.0);
  EXPECT_EQ(schedule.LearningRate(1), 0.0);   // lambda(0): warmup starts at 0
  EXPECT_EQ(schedule.LearningRate(2), 0.25);
  EXPECT_EQ(schedule.LearningRate(4), 0.75);
  EXPECT_EQ(schedule.LearningRate(5), 1.0);   // lambda(4) = (10 - 4) / 6
  EXPECT_EQ(schedule.LearningRate(8), 0.5);   // (10 - 7) / 6
  EXPECT_EQ(schedule.LearningRate(11), 0.0);  // (10 - 10) / 6
  EXPECT_EQ(schedule.LearningRate(13), 0.0);  // clamped, not negative
}

TEST(LrScheduleTest, CosineByHand) {
  const LrSchedule schedule = Make("cosine", 2.0, 6, 2, 0.0);
  EXPECT_EQ(schedule.LearningRate(2), 1.0);  // warmup 1 / 2
  EXPECT_EQ(schedule.LearningRate(3), 2.0);  // progress 0: cos(0) = 1
  // progress 0.5: 0.5 * (1 + cos(pi / 2)), exact up to cos's rounding near zero.
  EXPECT_NEAR(schedule.LearningRate(5), 1.0, 1e-15);
  EXPECT_EQ(schedule.LearningRate(7), 0.0);  // progress 1: cos(pi) = -1
}

TEST(LrScheduleTest, ConstantIgnoresWarmupButConstantWithWarmupDoesNot) {
  const LrSchedule constant = Make("constant", 3e-5, 10, 5, 0.0);
  EXPECT_EQ(constant.warmup_steps(), 0);
  EXPECT_EQ(constant.LearningRate(1), 3e-5);
  EXPECT_EQ(constant.LearningRate(10), 3e-5);
  const LrSchedule with_warmup = Make("constant_with_warmup", 4.0, 10, 4, 0.0);
  EXPECT_EQ(with_warmup.LearningRate(1), 0.0);
  EXPECT_EQ(with_warmup.LearningRate(3), 2.0);
  EXPECT_EQ(with_warmup.LearningRate(5), 4.0);
  EXPECT_EQ(with_warmup.LearningRate(10), 4.0);
}

TEST(LrScheduleTest, WarmupStepsWinOverTheRatioWhichRoundsUp) {
  EXPECT_EQ(ResolveWarmupSteps(100, 3, 0.5), 3);
  EXPECT_EQ(ResolveWarmupSteps(37, 0, 0.1), 4);    // ceil(3.7)
  EXPECT_EQ(ResolveWarmupSteps(100, 0, 0.07), 8);  // 7.000000000000001 in double, as in HF
  EXPECT_EQ(ResolveWarmupSteps(50, 0, 0.0), 0);
  EXPECT_EQ(ResolveWarmupSteps(50, 0, 1.0), 50);
}

TEST(LrScheduleTest, BadFlagsGiveOneLineNamingTheFlag) {
  auto message = [](absl::string_view type, double lr, int64_t total, int64_t steps,
                    double ratio) {
    absl::StatusOr<LrSchedule> s = MakeLrSchedule(type, lr, total, steps, ratio);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(s.status().message().find('\n'), absl::string_view::npos);
    return std::string(s.status().message());
  };
  EXPECT_THAT(message("polynomial", 1e-5, 10, 0, 0.0),
              HasSubstr("--lr_scheduler_type must be one of linear, cosine, constant, "
                        "constant_with_warmup; got \"polynomial\""));
  EXPECT_THAT(message("linear", 1e-5, 10, 0, 1.5), HasSubstr("--warmup_ratio must be in [0, 1]"));
  EXPECT_THAT(message("linear", 1e-5, 10, 0, -0.1), HasSubstr("--warmup_ratio"));
  EXPECT_THAT(message("linear", 1e-5, 10, 0, NAN), HasSubstr("--warmup_ratio"));
  EXPECT_THAT(message("linear", 1e-5, 10, -2, 0.0),
              HasSubstr("--warmup_steps must be >= 0; got -2"));
  EXPECT_THAT(message("linear", -1e-5, 10, 0, 0.0), HasSubstr("--learning_rate"));
  EXPECT_THAT(message("linear", 1e-5, 0, 0, 0.0), HasSubstr("--max_steps"));
}

TEST(LrScheduleTest, TypeNamesRoundTrip) {
  for (LrScheduleType type : {LrScheduleType::kLinear, LrScheduleType::kConstant,
                              LrScheduleType::kConstantWithWarmup, LrScheduleType::kCosine}) {
    EXPECT_EQ(Make(LrScheduleTypeName(type), 1.0, 5, 0, 0.0).type(), type);
  }
}

}  // namespace
}  // namespace xlmr::optim
