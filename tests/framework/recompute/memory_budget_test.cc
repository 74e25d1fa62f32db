// Memory budgets as xlmr_finetune's --activation_memory_budget takes them: bytes with units,
// whole bytes, fractions; one-line errors that name the flag the text came from.
#include "framework/recompute/memory_budget.h"

#include "gtest/gtest.h"

namespace xlmr::recompute {
namespace {

absl::StatusOr<MemoryBudget> Parse(const char* text) {
  return ParseMemoryBudget(text, "activation_memory_budget");
}

int64_t Bytes(const char* text) {
  const auto budget = Parse(text);
  EXPECT_TRUE(budget.ok()) << text << ": " << budget.status();
  if (!budget.ok()) return -1;
  EXPECT_EQ(budget->kind, MemoryBudget::Kind::kBytes) << text;
  return budget->bytes;
}

double Fraction(const char* text) {
  const auto budget = Parse(text);
  EXPECT_TRUE(budget.ok()) << text << ": " << budget.status();
  if (!budget.ok()) return -1;
  EXPECT_EQ(budget->kind, MemoryBudget::Kind::kFraction) << text;
  return budget->fraction;
}

TEST(MemoryBudgetTest, BytesWithDecimalAndBinaryUnits) {
  EXPECT_EQ(Bytes("1.5GiB"), 1610612736);
  EXPECT_EQ(Bytes("800MB"), 800000000);
  EXPECT_EQ(Bytes("64KiB"), 65536);
  EXPECT_EQ(Bytes("2kb"), 2000);        // units are case-insensitive
  EXPECT_EQ(Bytes(" 3 MiB "), 3145728);  // blanks around and before the unit
  EXPECT_EQ(Bytes("123B"), 123);
  EXPECT_EQ(Bytes("1TiB"), 1099511627776);
  EXPECT_EQ(Bytes("0.5KB"), 500);
  EXPECT_EQ(Bytes("1.0001KiB"), 1024);   // rounded down to whole bytes
  EXPECT_EQ(Parse(" 3 MiB ")->text, " 3 MiB ");  // kept as written, for messages
}

TEST(MemoryBudgetTest, NumberWithoutUnitIsBytesAboveOneAndAFractionUpToOne) {
  EXPECT_EQ(Bytes("123456789"), 123456789);
  EXPECT_EQ(Bytes("2"), 2);
  EXPECT_DOUBLE_EQ(Fraction("0.4"), 0.4);
  EXPECT_DOUBLE_EQ(Fraction("1"), 1.0);
  EXPECT_DOUBLE_EQ(Fraction(".25"), 0.25);
}

TEST(MemoryBudgetTest, FractionResolvesAgainstTheKeepEverythingPeak) {
  EXPECT_EQ(Parse("0.4")->ToBytes(1000), 400);
  EXPECT_EQ(Parse("0.333")->ToBytes(1000), 333);  // rounded down
  EXPECT_EQ(Parse("800MB")->ToBytes(1), 800000000);
}

TEST(MemoryBudgetTest, MalformedValuesNameTheFlagOnOneLine) {
  for (const char* text : {"", "abc", "1.5", "0", "0.0", "-1GB", "12 apples", "1e9", "1..5GB", "GiB",
                           "0.1B", "99999999999TB"}) {
    const auto budget = Parse(text);
    ASSERT_FALSE(budget.ok()) << "'" << text << "' was accepted";
    const std::string message(budget.status().message());
    EXPECT_EQ(budget.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(message.rfind("--activation_memory_budget: expected ", 0), 0u) << message;
    EXPECT_NE(message.find(std::string("got '") + text + "'"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
  EXPECT_NE(ParseMemoryBudget("x", "budget").status().message().find("--budget:"), absl::string_view::npos);
}

TEST(MemoryBudgetTest, FormatsBytesInBinaryUnits) {
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(3407872), "3.25 MiB");
  EXPECT_EQ(FormatBytes(1610612736), "1.50 GiB");
}

}  // namespace
}  // namespace xlmr::recompute
