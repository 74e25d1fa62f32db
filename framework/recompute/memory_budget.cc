#include "framework/recompute/memory_budget.h"

#include <cmath>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace xlmr::recompute {
namespace {

struct Unit {
  const char* name;  // lower case
  double multiplier;
};

constexpr Unit kUnits[] = {
    {"b", 1.0},        {"kb", 1e3},           {"mb", 1e6},           {"gb", 1e9},
    {"tb", 1e12},      {"kib", 1024.0},       {"mib", 1048576.0},    {"gib", 1073741824.0},
    {"tib", 1099511627776.0},
};

// Digits with at most one '.', and at least one digit.
bool IsPlainDecimal(absl::string_view text) {
  int digits = 0, dots = 0;
  for (char c : text) {
    if (absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      ++digits;
    } else if (c == '.') {
      ++dots;
    } else {
      return false;
    }
  }
  return digits > 0 && dots <= 1;
}

// Splits "1.5 GiB" into ("1.5", "gib"); the unit is lower-cased and may be empty.
std::pair<absl::string_view, std::string> SplitNumberAndUnit(absl::string_view text) {
  size_t end = 0;
  auto numeric = [](char c) { return absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '.'; };
  while (end < text.size() && numeric(text[end])) ++end;
  return {text.substr(0, end), absl::AsciiStrToLower(absl::StripAsciiWhitespace(text.substr(end)))};
}

absl::Status Invalid(absl::string_view flag_name, absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "--", flag_name, ": expected bytes with a unit (e.g. 1.5GiB, 800MB), a whole number of bytes, "
      "or a fraction in (0, 1] of the activation peak without checkpointing (e.g. 0.4); got '",
      text, "'", why.empty() ? "" : " (", why, why.empty() ? "" : ")"));
}

absl::StatusOr<MemoryBudget> BytesWithUnit(double number, const std::string& unit,
                                           absl::string_view flag_name, absl::string_view text) {
  for (const Unit& known : kUnits) {
    if (unit != known.name) continue;
    const double bytes = std::floor(number * known.multiplier);
    if (bytes < 1) return Invalid(flag_name, text, "less than one byte");
    if (bytes >= 9.2e18) return Invalid(flag_name, text, "too large");
    return MemoryBudget{MemoryBudget::Kind::kBytes, static_cast<int64_t>(bytes), 0.0, std::string(text)};
  }
  return Invalid(flag_name, text, absl::StrCat("unknown unit '", unit, "'"));
}

absl::StatusOr<MemoryBudget> WithoutUnit(absl::string_view number_text, double number,
                                         absl::string_view flag_name, absl::string_view text) {
  if (number > 0 && number <= 1) {
    return MemoryBudget{MemoryBudget::Kind::kFraction, 0, number, std::string(text)};
  }
  int64_t bytes = 0;
  if (number > 1 && absl::SimpleAtoi(number_text, &bytes)) {
    return MemoryBudget{MemoryBudget::Kind::kBytes, bytes, 0.0, std::string(text)};
  }
  return Invalid(flag_name, text,
                 number <= 0 ? "must be positive"
                             : "above 1 without a unit: write whole bytes or add a unit");
}

}  // namespace

int64_t MemoryBudget::ToBytes(int64_t keep_all_peak_bytes) const {
  if (kind == Kind::kBytes) return bytes;
  return static_cast<int64_t>(std::floor(fraction * static_cast<double>(keep_all_peak_bytes)));
}

std::string MemoryBudget::ToString() const {
  if (kind == Kind::kBytes) return absl::StrCat(bytes, " bytes");
  return absl::StrCat(fraction, " of the keep-all peak");
}

absl::StatusOr<MemoryBudget> ParseMemoryBudget(absl::string_view text, absl::string_view flag_name) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  const auto [number_text, unit] = SplitNumberAndUnit(trimmed);
  double number = 0;
  if (!IsPlainDecimal(number_text) || !absl::SimpleAtod(number_text, &number) || !std::isfinite(number)) {
    return Invalid(flag_name, text, "");
  }
  if (unit.empty()) return WithoutUnit(number_text, number, flag_name, text);
  return BytesWithUnit(number, unit, flag_name, text);
}

std::string FormatBytes(int64_t bytes) {
  constexpr const char* kNames[] = {"KiB", "MiB", "GiB", "TiB"};
  if (bytes < 1024 && bytes > -1024) return absl::StrCat(bytes, " B");
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (unit < 3 && std::fabs(value) >= 1024.0) {
    value /= 1024.0;
    ++unit;
  }
  return absl::StrFormat("%.2f %s", value, kNames[unit]);
}

}  // namespace xlmr::recompute
