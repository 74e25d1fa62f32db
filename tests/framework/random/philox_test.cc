#include "framework/random/philox.h"

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace xlmr {
namespace {

// Known-answer vectors of Philox4x32-10 published with Random123 (kat_vectors).
TEST(PhiloxTest, MatchesPublishedKnownAnswers) {
  EXPECT_EQ(Philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (PhiloxOutput{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(Philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                          {0xffffffffu, 0xffffffffu}),
            (PhiloxOutput{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(Philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                          {0xa4093822u, 0x299f31d0u}),
            (PhiloxOutput{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(PhiloxTest, UniformCoversZeroToOneExclusive) {
  EXPECT_EQ(UniformFromWord(0u), 0.0f);
  EXPECT_EQ(UniformFromWord(0xffu), 0.0f);  // the low 8 bits are dropped
  EXPECT_EQ(UniformFromWord(0x80000000u), 0.5f);
  EXPECT_EQ(UniformFromWord(0xffffffffu), 1.0f - 1.0f / 16777216.0f);
}

TEST(PhiloxTest, CounterPackingIsTheDocumentedOne) {
  const DropoutKey key{0x0123456789abcdefull, 7, 3, 11, 2};
  EXPECT_EQ(DropoutPhiloxKey(key), (PhiloxKey{0x89abcdefu, 0x01234567u}));
  EXPECT_EQ(DropoutCounter(key, 5), (PhiloxCounter{5u, (2u << 16) | 11u, 3u, 7u}));
  const PhiloxOutput words = Philox4x32_10(DropoutCounter(key, 5), DropoutPhiloxKey(key));
  EXPECT_EQ(DropoutUniform(key, 5 * 4 + 3), UniformFromWord(words[3]));
}

TEST(PhiloxTest, BulkUniformsEqualPerElementUniformsAtUnalignedRanges) {
  const DropoutKey key{42, 1, 0, 3, 1};
  for (int64_t begin : {0, 1, 3, 6}) {
    for (int64_t count : {0, 1, 2, 5, 13}) {
      std::vector<float> bulk(count);
      DropoutUniforms(key, begin, count, bulk.data());
      for (int64_t i = 0; i < count; ++i) {
        EXPECT_EQ(bulk[i], DropoutUniform(key, begin + i)) << "begin " << begin << " i " << i;
      }
    }
  }
}

TEST(PhiloxTest, EveryKeyFieldChangesTheStream) {
  const DropoutKey base{42, 10, 1, 2, 3};
  std::vector<DropoutKey> keys(6, base);
  keys[1].seed = 43;
  keys[2].step = 11;
  keys[3].micro_step = 2;
  keys[4].layer = 3;
  keys[5].op = 4;
  std::set<std::vector<float>> streams;
  for (const DropoutKey& key : keys) {
    std::vector<float> values(64);
    DropoutUniforms(key, 0, 64, values.data());
    streams.insert(values);
  }
  EXPECT_EQ(streams.size(), keys.size());
}

// Mean and variance of 2^20 uniforms: U[0,1) has mean 1/2 and variance 1/12. The standard
// error of the mean is sqrt(1/12 / n) ~ 2.8e-4; 5 sigma bounds make a false failure
// (probability ~ 6e-7) practically impossible while still catching a biased generator.
TEST(PhiloxTest, UniformsHaveTheRightMeanAndVariance) {
  const DropoutKey key{1234, 0, 0, 0, 0};
  const int64_t n = int64_t{1} << 20;
  std::vector<float> values(n);
  DropoutUniforms(key, 0, n, values.data());
  double sum = 0.0, sum_squares = 0.0;
  for (float v : values) {
    ASSERT_GE(v, 0.0f);
    ASSERT_LT(v, 1.0f);
    sum += v;
    sum_squares += double{v} * v;
  }
  const double mean = sum / n;
  const double variance = sum_squares / n - mean * mean;
  EXPECT_NEAR(mean, 0.5, 5.0 * std::sqrt(1.0 / 12.0 / n));
  // Var of (u - 1/2)^2 is 1/180, so the sample variance has standard error sqrt(1/180 / n).
  EXPECT_NEAR(variance, 1.0 / 12.0, 5.0 * std::sqrt(1.0 / 180.0 / n));
}

TEST(PhiloxDeathTest, RejectsSiteIdsThatWouldAlias) {
  DropoutKey key{1, 0, 0, 1u << 16, 0};
  EXPECT_DEATH(DropoutUniform(key, 0), "layer");
  key.layer = 0;
  key.op = 1u << 16;
  EXPECT_DEATH(DropoutUniform(key, 0), "op");
  key.op = 0;
  EXPECT_DEATH(DropoutUniform(key, kMaxDropoutElements), "dropout element");
}

}  // namespace
}  // namespace xlmr
