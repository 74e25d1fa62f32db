#include "kernels/cpu/dropout_uniforms.h"

#include <cstdint>
#include <vector>

#include "framework/random/philox.h"
#include "gtest/gtest.h"

namespace xlmr::kernels::cpu {
namespace {

// Tolerance 0: the vectorised path is integer arithmetic plus an exact conversion, so it must
// return exactly framework/random's uniforms, whatever the alignment of the range (the scalar
// head and tail around the 32-element steps) and wherever in the counter space it lies.
void ExpectSameAsDropoutUniforms(const DropoutKey& key, int64_t begin, int64_t count) {
  std::vector<float> expected(count), actual(count);
  DropoutUniforms(key, begin, count, expected.data());
  DropoutUniformsVectorized(key, begin, count, actual.data());
  for (int64_t i = 0; i < count; ++i) {
    ASSERT_EQ(actual[i], expected[i]) << "begin " << begin << " count " << count << " i " << i;
  }
}

TEST(DropoutUniformsVectorizedTest, EqualsDropoutUniformsAtEveryAlignment) {
  const DropoutKey key{0x123456789abcdefull, 77, 1, 3, 2};
  for (int64_t begin = 0; begin < 40; ++begin) {
    for (int64_t count : {0, 1, 3, 4, 31, 32, 33, 64, 65, 100, 1000}) {
      ExpectSameAsDropoutUniforms(key, begin, count);
    }
  }
}

TEST(DropoutUniformsVectorizedTest, EqualsDropoutUniformsForEveryKeyFieldAndFarCounters) {
  const std::vector<DropoutKey> keys = {{0, 0, 0, 0, 0},
                                        {~uint64_t{0}, ~uint32_t{0}, ~uint32_t{0}, 65535, 65535},
                                        {42, 1000, 7, 12, 3}};
  for (const DropoutKey& key : keys) {
    ExpectSameAsDropoutUniforms(key, 0, 4096);
    ExpectSameAsDropoutUniforms(key, (int64_t{1} << 33) + 5, 777);
    ExpectSameAsDropoutUniforms(key, kMaxDropoutElements - 1000, 1000);  // the last blocks
  }
}

TEST(DropoutUniformsVectorizedDeathTest, RejectsRangesPastTheCounterSpace) {
  std::vector<float> out(8);
  EXPECT_DEATH(DropoutUniformsVectorized({}, kMaxDropoutElements - 4, 8, out.data()),
               "dropout elements");
}

}  // namespace
}  // namespace xlmr::kernels::cpu
