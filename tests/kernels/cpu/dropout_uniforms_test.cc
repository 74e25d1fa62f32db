#include "kernels/cpu/dropout_uniforms.h"

#include <cstdint>
#include <vector>

#include "framework/random/philox.h"
#include "kernels/cpu/instruction_set.h"
#include "gtest/gtest.h"

namespace xlmr::kernels::cpu {
namespace {

using dropout_uniforms_internal::DropoutUniformsWith;

// Tolerance 0: the vectorised paths are integer arithmetic plus an exact conversion, so they
// must return exactly framework/random's uniforms, whatever the alignment and length of the
// range (the partial steps around the whole ones) and wherever in the counter space it lies.
// Every vector path this CPU can run is checked, not only the one it picks.
void ExpectSameAsDropoutUniforms(const DropoutKey& key, int64_t begin, int64_t count) {
  std::vector<float> expected(count), actual(count);
  DropoutUniforms(key, begin, count, expected.data());
  DropoutUniformsVectorized(key, begin, count, actual.data());
  for (int64_t i = 0; i < count; ++i) {
    ASSERT_EQ(actual[i], expected[i]) << "begin " << begin << " count " << count << " i " << i;
  }
  for (InstructionSet isa : {InstructionSet::kAvx2, InstructionSet::kAvx512}) {
    if (!CpuSupports(isa)) continue;
    std::vector<float> with(count + 1, -1.0f);  // one sentinel past the end
    DropoutUniformsWith(isa, key, begin, count, with.data());
    for (int64_t i = 0; i < count; ++i) {
      ASSERT_EQ(with[i], expected[i]) << "isa " << static_cast<int>(isa) << " begin " << begin
                                      << " count " << count << " i " << i;
    }
    ASSERT_EQ(with[count], -1.0f) << "isa " << static_cast<int>(isa) << " wrote past the range";
  }
}

TEST(DropoutUniformsVectorizedTest, EqualsDropoutUniformsAtEveryAlignment) {
  const DropoutKey key{0x123456789abcdefull, 77, 1, 3, 2};
  for (int64_t begin = 0; begin < 70; ++begin) {
    for (int64_t count : {0, 1, 3, 4, 25, 31, 32, 33, 63, 64, 65, 100, 129, 1000}) {
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
