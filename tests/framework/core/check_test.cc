#include "framework/core/check.h"

#include "gtest/gtest.h"

namespace xlmr {
namespace {

TEST(CheckDeathTest, FailureNamesExpressionAndMessage) {
  int rows = 3;
  EXPECT_DEATH(XLMR_CHECK(rows == 4) << "rows of the batch", "check failed: rows == 4 rows of the batch");
  EXPECT_DEATH(XLMR_CHECK_EQ(rows, 4), "rows = 3, 4 = 4");
}

TEST(CheckDeathTest, PassingCheckEvaluatesOnce) {
  int calls = 0;
  XLMR_CHECK(++calls == 1) << "never printed";
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace xlmr
