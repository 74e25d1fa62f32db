#include "framework/optim/lr_schedule_kwargs.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"

namespace xlmr::optim {
namespace {

using nlohmann::json;

// The keyword arguments of each type's transformers function that a user may set.
std::vector<std::string> ArgumentsOf(LrScheduleType type) {
  switch (type) {
    case LrScheduleType::kLinear:
    case LrScheduleType::kConstant:
    case LrScheduleType::kConstantWithWarmup:
      return {};
    case LrScheduleType::kCosine:
    case LrScheduleType::kCosineWithRestarts:
      return {"num_cycles"};
    case LrScheduleType::kPolynomial:
      return {"lr_end", "power"};
    case LrScheduleType::kInverseSqrt:
      return {"timescale"};
    case LrScheduleType::kCosineWithMinLr:
      return {"num_cycles", "min_lr", "min_lr_rate"};
    case LrScheduleType::kCosineWarmupWithMinLr:
      return {"num_cycles", "min_lr", "min_lr_rate", "warmup_lr_rate"};
    case LrScheduleType::kWarmupStableDecay:
      return {"num_decay_steps", "num_stable_steps", "warmup_type", "decay_type", "min_lr_ratio",
              "num_cycles"};
  }
  return {};
}

absl::Status KwargsError(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("--lr_scheduler_kwargs: ", what));
}

absl::Status CheckArgumentNames(LrScheduleType type, const json& args) {
  const std::vector<std::string> accepted = ArgumentsOf(type);
  for (const auto& [key, value] : args.items()) {
    if (std::find(accepted.begin(), accepted.end(), key) != accepted.end()) continue;
    const std::string takes =
        accepted.empty() ? "no arguments" : absl::StrCat("only ", absl::StrJoin(accepted, ", "));
    return KwargsError(absl::StrCat(LrScheduleTypeName(type), " takes ", takes, "; got ",
                                    json(key).dump()));
  }
  return absl::OkStatus();
}

// Sets `out` to args[key] when the key is there: a JSON number (T = double) or integer
// (T = int64_t) for which in_range holds; anything else is an error saying `expected`.
template <typename T, typename Out, typename InRange>
absl::Status Read(const json& args, const char* key, const char* expected, InRange in_range,
                  Out& out) {
  const auto it = args.find(key);
  if (it == args.end()) return absl::OkStatus();
  const bool typed = std::is_same_v<T, double> ? it->is_number() : it->is_number_integer();
  if (typed && in_range(it->get<T>())) {
    out = it->get<T>();
    return absl::OkStatus();
  }
  return KwargsError(absl::StrCat(key, " must be ", expected, "; got ", it->dump()));
}

absl::Status ReadShape(const json& args, const char* key, WsdShape& out) {
  const auto it = args.find(key);
  if (it == args.end()) return absl::OkStatus();
  const std::string text = it->is_string() ? it->get<std::string>() : "";
  if (text == "linear") {
    out = WsdShape::kLinear;
  } else if (text == "cosine") {
    out = WsdShape::kCosine;
  } else if (text == "1-sqrt") {
    out = WsdShape::kOneMinusSqrt;
  } else {
    return KwargsError(absl::StrCat(key, " must be \"linear\", \"cosine\" or \"1-sqrt\"; got ",
                                    it->dump()));
  }
  return absl::OkStatus();
}

bool PositiveFinite(double v) { return v > 0 && std::isfinite(v); }
bool Fraction(double v) { return v >= 0 && v <= 1; }
bool PositiveInteger(int64_t v) { return v >= 1; }
bool NonNegativeInteger(int64_t v) { return v >= 0; }

// min_lr or min_lr_rate, exactly one (HF's get_cosine_with_min_lr_schedule_with_warmup*).
absl::Status ReadMinLr(LrScheduleType type, const json& args, double base_lr,
                       LrScheduleKwargs& kwargs) {
  const bool has_min_lr = args.contains("min_lr"), has_rate = args.contains("min_lr_rate");
  if (has_min_lr == has_rate) {
    return KwargsError(absl::StrCat(LrScheduleTypeName(type), " takes exactly one of min_lr and min_lr_rate; got ",
                                    has_min_lr ? "both" : "neither"));
  }
  if (has_rate) return Read<double>(args, "min_lr_rate", "a number in [0, 1]", Fraction, kwargs.min_lr_rate);
  const std::string expected = absl::StrCat("a number in [0, --learning_rate] with --learning_rate > 0 (it is ",
                                            base_lr, ")");
  double min_lr = 0;
  auto in_range = [base_lr](double v) { return base_lr > 0 && v >= 0 && v <= base_lr; };
  if (absl::Status s = Read<double>(args, "min_lr", expected.c_str(), in_range, min_lr); !s.ok()) return s;
  kwargs.min_lr_rate = min_lr / base_lr;  // as HF: min_lr / optimizer.defaults["lr"]
  return absl::OkStatus();
}

absl::Status ReadArguments(LrScheduleType type, const json& args, double base_lr,
                           LrScheduleKwargs& kwargs) {
  switch (type) {
    case LrScheduleType::kLinear:
    case LrScheduleType::kConstant:
    case LrScheduleType::kConstantWithWarmup:
      return absl::OkStatus();
    case LrScheduleType::kCosine:
      return Read<double>(args, "num_cycles", "a number > 0", PositiveFinite, kwargs.num_cycles);
    case LrScheduleType::kCosineWithRestarts: {
      int64_t cycles = 1;
      absl::Status s = Read<int64_t>(args, "num_cycles", "an integer >= 1", PositiveInteger, cycles);
      kwargs.num_cycles = static_cast<double>(cycles);
      return s;
    }
    case LrScheduleType::kPolynomial: {
      const std::string below = absl::StrCat("a number >= 0 below --learning_rate (", base_lr, ")");
      auto in_range = [base_lr](double v) { return v >= 0 && v < base_lr; };
      // HF's own check (lr_end < lr_init) applies to the default too.
      if (!args.contains("lr_end") && !in_range(kwargs.lr_end)) {
        return KwargsError(absl::StrCat("polynomial's default lr_end (1e-07) must be below --learning_rate (",
                                        base_lr, "); give a smaller lr_end"));
      }
      absl::Status s = Read<double>(args, "lr_end", below.c_str(), in_range, kwargs.lr_end);
      if (!s.ok()) return s;
      return Read<double>(args, "power", "a number > 0", PositiveFinite, kwargs.power);
    }
    case LrScheduleType::kInverseSqrt:
      return Read<int64_t>(args, "timescale", "an integer >= 1", PositiveInteger, kwargs.timescale);
    case LrScheduleType::kCosineWithMinLr:
    case LrScheduleType::kCosineWarmupWithMinLr: {
      absl::Status s = Read<double>(args, "num_cycles", "a number > 0", PositiveFinite, kwargs.num_cycles);
      if (s.ok()) s = ReadMinLr(type, args, base_lr, kwargs);
      if (s.ok()) s = Read<double>(args, "warmup_lr_rate", "a number in [0, 1]", Fraction, kwargs.warmup_lr_rate);
      return s;
    }
    case LrScheduleType::kWarmupStableDecay: {
      if (!args.contains("num_decay_steps")) {
        return KwargsError("warmup_stable_decay needs num_decay_steps (e.g. {\"num_decay_steps\": 100})");
      }
      absl::Status s = Read<int64_t>(args, "num_decay_steps", "an integer >= 0", NonNegativeInteger,
                                     kwargs.num_decay_steps);
      if (s.ok()) s = Read<int64_t>(args, "num_stable_steps", "an integer >= 0", NonNegativeInteger,
                                    kwargs.num_stable_steps);
      if (s.ok()) s = ReadShape(args, "warmup_type", kwargs.warmup_type);
      if (s.ok()) s = ReadShape(args, "decay_type", kwargs.decay_type);
      if (s.ok()) s = Read<double>(args, "min_lr_ratio", "a number in [0, 1]", Fraction, kwargs.min_lr_ratio);
      if (s.ok()) s = Read<double>(args, "num_cycles", "a number > 0", PositiveFinite, kwargs.num_cycles);
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LrScheduleKwargs> ParseLrScheduleKwargs(LrScheduleType type,
                                                      absl::string_view json_text, double base_lr) {
  json args = json::object();
  if (!json_text.empty()) {
    args = json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
    if (!args.is_object()) {
      return KwargsError(absl::StrCat(
          "expected a JSON object of the schedule's arguments, such as {\"num_cycles\": 2}; got ",
          args.is_discarded() ? "text that is not JSON" : args.dump()));
    }
  }
  LrScheduleKwargs kwargs;
  if (type == LrScheduleType::kCosineWithRestarts) kwargs.num_cycles = 1.0;
  if (absl::Status s = CheckArgumentNames(type, args); !s.ok()) return s;
  if (absl::Status s = ReadArguments(type, args, base_lr, kwargs); !s.ok()) return s;
  return kwargs;
}

}  // namespace xlmr::optim
