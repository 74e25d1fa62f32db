// ops::RobertaPositionIds on the CPU: HF's create_position_ids_from_input_ids,
// cumsum(ids != pad) * (ids != pad) + pad, on hand-checked rows. Exact (integers).
#include "framework/ops/position_ids.h"

#include <algorithm>
#include <vector>

#include "gtest/gtest.h"

namespace xlmr {
namespace {

TEST(PositionIdsTest, CountsOnlyRealTokensAndGivesPaddingThePadId) {
  constexpr int32_t kPad = 1;
  Tensor ids = Tensor::Zeros({3, 5}, DType::kI32);
  const std::vector<int32_t> rows = {0, 7, 9, 2, 1,   // right padding
                                     1, 1, 0, 5, 2,   // left padding
                                     1, 1, 1, 1, 1};  // padding only
  std::copy(rows.begin(), rows.end(), ids.data<int32_t>());
  const Tensor positions = ops::RobertaPositionIds(ids, kPad);
  const std::vector<int32_t> expected = {2, 3, 4, 5, 1,
                                         1, 1, 2, 3, 4,
                                         1, 1, 1, 1, 1};
  ASSERT_EQ(positions.shape(), Shape({3, 5}));
  ASSERT_EQ(positions.dtype(), DType::kI32);
  EXPECT_EQ(std::vector<int32_t>(positions.data<int32_t>(), positions.data<int32_t>() + 15), expected);
}

}  // namespace
}  // namespace xlmr
