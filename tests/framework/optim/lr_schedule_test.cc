#include "framework/optim/lr_schedule.h"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
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
                double warmup_ratio, const std::string& kwargs = "") {
  absl::StatusOr<LrSchedule> schedule =
      MakeLrSchedule(type, base_lr, total, warmup_steps, warmup_ratio, kwargs);
  EXPECT_TRUE(schedule.ok()) << schedule.status();
  return *schedule;
}

// Tolerance: 1e-12 relative (exact where HF's rate is 0). Both sides evaluate the same double
// operations in the same order, so most rates are equal bit for bit; cos, sqrt and pow may
// round their last bit differently in another libm build (about 1e-16 relative). A schedule one
// step off changes a rate by at least 1 / total_steps relative (here >= 1e-4), so 1e-12 tells
// the two apart by eight orders of magnitude. The worst error seen is printed.
TEST(LrScheduleTest, MatchesTransformersSchedulersAtEveryStep) {
  std::ifstream file(kGolden);
  ASSERT_TRUE(file.good()) << kGolden;
  const json golden = json::parse(file);
  ASSERT_EQ(golden.at("cases").size(), 29u);
  std::set<std::string> types_seen, types_with_kwargs, types_with_warmup;
  double worst = 0;
  for (const json& c : golden.at("cases")) {
    const std::string type = c.at("type");
    const std::string kwargs = c.at("kwargs").dump();
    SCOPED_TRACE(type + " total " + c.at("total_steps").dump() + " kwargs " + kwargs);
    const LrSchedule schedule = Make(type, c.at("base_lr"), c.at("total_steps"),
                                     c.at("warmup_steps"), c.at("warmup_ratio"), kwargs);
    if (type != "constant") {
      EXPECT_EQ(schedule.warmup_steps(), c.at("resolved_warmup_steps"));
    }
    types_seen.insert(type);
    if (!c.at("kwargs").empty()) types_with_kwargs.insert(type);
    if (c.at("resolved_warmup_steps").get<int64_t>() > 0) types_with_warmup.insert(type);
    const json& lrs = c.at("lrs");
    for (size_t i = 0; i < lrs.size(); ++i) {
      const double expected = lrs[i].get<double>();
      const double ours = schedule.LearningRate(static_cast<int64_t>(i) + 1);
      const double error = expected == 0 ? std::fabs(ours) : std::fabs(ours - expected) / std::fabs(expected);
      EXPECT_LE(error, expected == 0 ? 0.0 : 1e-12)
          << "step " << i + 1 << ": ours " << ours << ", transformers " << expected;
      worst = std::max(worst, error);
    }
  }
  std::printf("worst relative error against transformers %s: %.3g\n",
              golden.at("transformers_version").get<std::string>().c_str(), worst);
  // Every type, each with warmup, and each that takes arguments with some.
  EXPECT_EQ(types_seen.size(), 10u);
  EXPECT_EQ(types_with_warmup.size(), 10u);
  EXPECT_EQ(types_with_kwargs,
            (std::set<std::string>{"cosine", "cosine_with_restarts", "polynomial", "inverse_sqrt",
                                   "cosine_with_min_lr", "cosine_warmup_with_min_lr",
                                   "warmup_stable_decay"}));
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
  EXPECT_THAT(message("exponential", 1e-5, 10, 0, 0.0),
              HasSubstr("--lr_scheduler_type must be one of linear, cosine, cosine_with_restarts, "
                        "polynomial, constant, constant_with_warmup, inverse_sqrt, "
                        "cosine_with_min_lr, cosine_warmup_with_min_lr, warmup_stable_decay; got "
                        "\"exponential\""));
  EXPECT_THAT(message("linear", 1e-5, 10, 0, 1.5), HasSubstr("--warmup_ratio must be in [0, 1]"));
  EXPECT_THAT(message("linear", 1e-5, 10, 0, -0.1), HasSubstr("--warmup_ratio"));
  EXPECT_THAT(message("linear", 1e-5, 10, 0, NAN), HasSubstr("--warmup_ratio"));
  EXPECT_THAT(message("linear", 1e-5, 10, -2, 0.0),
              HasSubstr("--warmup_steps must be >= 0; got -2"));
  EXPECT_THAT(message("linear", -1e-5, 10, 0, 0.0), HasSubstr("--learning_rate"));
  EXPECT_THAT(message("linear", 1e-5, 0, 0, 0.0), HasSubstr("--max_steps"));
}

TEST(LrScheduleTest, TypeNamesRoundTrip) {
  for (LrScheduleType type :
       {LrScheduleType::kLinear, LrScheduleType::kCosine, LrScheduleType::kCosineWithRestarts,
        LrScheduleType::kPolynomial, LrScheduleType::kConstant,
        LrScheduleType::kConstantWithWarmup, LrScheduleType::kInverseSqrt,
        LrScheduleType::kCosineWithMinLr, LrScheduleType::kCosineWarmupWithMinLr,
        LrScheduleType::kWarmupStableDecay}) {
    EXPECT_EQ(ParseLrScheduleType(LrScheduleTypeName(type)).value(), type);
  }
}

// Hand-computed: warmup_stable_decay with 2 warmup, 3 stable and 4 linear decay steps of 12,
// min_lr_ratio 0.5: the warmup starts at the minimum and the run ends there.
TEST(LrScheduleTest, WarmupStableDecayPhasesByHand) {
  const LrSchedule schedule =
      Make("warmup_stable_decay", 1.0, 12, 2, 0.0,
           R"({"num_decay_steps": 4, "num_stable_steps": 3, "decay_type": "linear", "min_lr_ratio": 0.5})");
  EXPECT_EQ(schedule.LearningRate(1), 0.5);    // warmup progress 0: the minimum
  EXPECT_EQ(schedule.LearningRate(2), 0.75);   // progress 1/2
  EXPECT_EQ(schedule.LearningRate(3), 1.0);    // stable, k = 2..4
  EXPECT_EQ(schedule.LearningRate(5), 1.0);
  EXPECT_EQ(schedule.LearningRate(6), 1.0);    // decay progress 0
  EXPECT_EQ(schedule.LearningRate(8), 0.75);   // progress 1/2
  EXPECT_EQ(schedule.LearningRate(10), 0.5);   // k = 9: after the decay, min_lr_ratio
  EXPECT_EQ(schedule.LearningRate(12), 0.5);
}

// Every way --lr_scheduler_kwargs can be wrong is one line naming the flag and the argument.
TEST(LrScheduleTest, BadKwargsGiveOneLineNamingTheFlag) {
  auto message = [](absl::string_view type, absl::string_view kwargs, double lr = 1e-4) {
    absl::StatusOr<LrSchedule> s = MakeLrSchedule(type, lr, 10, 2, 0.0, kwargs);
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << type << " " << kwargs;
    EXPECT_EQ(s.status().message().find('\n'), absl::string_view::npos);
    EXPECT_THAT(std::string(s.status().message()), HasSubstr("--lr_scheduler_kwargs"));
    return std::string(s.status().message());
  };
  EXPECT_THAT(message("cosine", "{num_cycles: 2}"), HasSubstr("not JSON"));
  EXPECT_THAT(message("cosine", "[2]"), HasSubstr("expected a JSON object"));
  EXPECT_THAT(message("cosine", R"({"num_cycle": 2})"),
              HasSubstr("cosine takes only num_cycles; got \"num_cycle\""));
  EXPECT_THAT(message("linear", R"({"num_cycles": 2})"), HasSubstr("linear takes no arguments"));
  EXPECT_THAT(message("constant", R"({"last_epoch": 3})"), HasSubstr("constant takes no arguments"));
  EXPECT_THAT(message("cosine", R"({"num_cycles": "2"})"), HasSubstr("num_cycles must be a number > 0"));
  EXPECT_THAT(message("cosine", R"({"num_cycles": -1})"), HasSubstr("num_cycles must be a number > 0; got -1"));
  EXPECT_THAT(message("cosine_with_restarts", R"({"num_cycles": 1.5})"),
              HasSubstr("num_cycles must be an integer >= 1; got 1.5"));
  EXPECT_THAT(message("polynomial", R"({"lr_end": 1e-3})"), HasSubstr("lr_end must be a number >= 0 below"));
  EXPECT_THAT(message("polynomial", "", 5e-8), HasSubstr("default lr_end (1e-07) must be below --learning_rate"));
  EXPECT_THAT(message("polynomial", R"({"power": 0})"), HasSubstr("power must be a number > 0"));
  EXPECT_THAT(message("polynomial", R"({"power": true})"), HasSubstr("power must be a number > 0; got true"));
  EXPECT_THAT(message("inverse_sqrt", R"({"timescale": 0})"), HasSubstr("timescale must be an integer >= 1"));
  EXPECT_THAT(message("cosine_with_min_lr", ""), HasSubstr("exactly one of min_lr and min_lr_rate; got neither"));
  EXPECT_THAT(message("cosine_with_min_lr", R"({"min_lr": 1e-6, "min_lr_rate": 0.1})"), HasSubstr("got both"));
  EXPECT_THAT(message("cosine_with_min_lr", R"({"min_lr_rate": 1.5})"), HasSubstr("min_lr_rate must be a number in [0, 1]"));
  EXPECT_THAT(message("cosine_with_min_lr", R"({"min_lr": 1e-6})", 0.0), HasSubstr("min_lr must be a number in [0, --learning_rate]"));
  EXPECT_THAT(message("cosine_with_min_lr", R"({"min_lr_rate": 0.1, "warmup_lr_rate": 0.5})"),
              HasSubstr("cosine_with_min_lr takes only num_cycles, min_lr, min_lr_rate; got \"warmup_lr_rate\""));
  EXPECT_THAT(message("cosine_warmup_with_min_lr", R"({"min_lr_rate": 0.1, "warmup_lr_rate": -0.5})"),
              HasSubstr("warmup_lr_rate must be a number in [0, 1]"));
  EXPECT_THAT(message("warmup_stable_decay", ""), HasSubstr("warmup_stable_decay needs num_decay_steps"));
  EXPECT_THAT(message("warmup_stable_decay", R"({"num_decay_steps": -3})"), HasSubstr("num_decay_steps must be an integer >= 0"));
  EXPECT_THAT(message("warmup_stable_decay", R"({"num_decay_steps": 3, "num_stable_steps": 2.5})"),
              HasSubstr("num_stable_steps must be an integer >= 0"));
  EXPECT_THAT(message("warmup_stable_decay", R"({"num_decay_steps": 3, "decay_type": "exp"})"),
              HasSubstr("decay_type must be \"linear\", \"cosine\" or \"1-sqrt\"; got \"exp\""));
  EXPECT_THAT(message("warmup_stable_decay", R"({"num_decay_steps": 3, "min_lr_ratio": 2})"),
              HasSubstr("min_lr_ratio must be a number in [0, 1]"));
}

}  // namespace
}  // namespace xlmr::optim
