#include "kernels/cpu/dropout_uniforms.h"

#include <immintrin.h>

#include <algorithm>

#include "framework/core/check.h"

// The AVX2 functions below carry a target attribute instead of the whole file being built with
// -mavx2: the binary keeps running on CPUs without AVX2 (they take DropoutUniforms), and no
// floating-point code of the file changes with the instruction set.
#define XLMR_TARGET_AVX2 __attribute__((target("avx2")))

namespace xlmr::kernels::cpu {
namespace {

// Philox blocks (of four words, one per mask element) per vectorised step: one per 32-bit lane.
constexpr int64_t kBlocksPerStep = 8;
constexpr int64_t kElementsPerStep = 4 * kBlocksPerStep;

// The Philox inputs of one dropout site, everything but the block index (counter word 0).
struct DropoutSite {
  uint32_t key0, key1;
  uint32_t counter1, counter2, counter3;
};

DropoutSite DropoutSiteOf(const DropoutKey& key) {
  const PhiloxKey philox_key = DropoutPhiloxKey(key);
  const PhiloxCounter counter = DropoutCounter(key, /*block=*/0);  // checks layer and op
  return {philox_key[0], philox_key[1], counter[1], counter[2], counter[3]};
}

bool CpuHasAvx2() {
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  return has_avx2;
}

// hi, lo: the high and low words of the 64-bit products multiplier * x, lane by lane
// (philox_internal::Round's products). _mm256_mul_epu32 multiplies the even 32-bit lanes only,
// so the odd lanes are shifted down, multiplied, and blended back into place.
XLMR_TARGET_AVX2 inline void MultiplyHighLow(__m256i x, __m256i multiplier, __m256i* hi,
                                             __m256i* lo) {
  const __m256i even = _mm256_mul_epu32(x, multiplier);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), multiplier);
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

// philox_internal::Round on eight counters at once; c[w] holds word w of every counter.
XLMR_TARGET_AVX2 inline void PhiloxRound(__m256i c[4], uint32_t key0, uint32_t key1) {
  __m256i hi0, lo0, hi1, lo1;
  MultiplyHighLow(c[0], _mm256_set1_epi32(static_cast<int>(philox_internal::kMultiplier0)), &hi0,
                  &lo0);
  MultiplyHighLow(c[2], _mm256_set1_epi32(static_cast<int>(philox_internal::kMultiplier1)), &hi1,
                  &lo1);
  const __m256i k0 = _mm256_set1_epi32(static_cast<int>(key0));
  const __m256i k1 = _mm256_set1_epi32(static_cast<int>(key1));
  c[0] = _mm256_xor_si256(_mm256_xor_si256(hi1, c[1]), k0);
  c[1] = lo1;
  c[2] = _mm256_xor_si256(_mm256_xor_si256(hi0, c[3]), k1);
  c[3] = lo0;
}

// UniformFromWord on eight words: (word >> 8) is below 2^24, so the int -> float conversion and
// the power-of-two scale are exact, as in the scalar code.
XLMR_TARGET_AVX2 inline __m256 UniformsFromWords(__m256i words) {
  return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_srli_epi32(words, 8)),
                       _mm256_set1_ps(1.0f / 16777216.0f));
}

// Writes out[4 * b + w] = u[w] lane b for the eight blocks b: a 4 x 8 transpose.
XLMR_TARGET_AVX2 inline void StoreBlockMajor(const __m256 u[4], float* out) {
  const __m256d u01_low = _mm256_castps_pd(_mm256_unpacklo_ps(u[0], u[1]));
  const __m256d u01_high = _mm256_castps_pd(_mm256_unpackhi_ps(u[0], u[1]));
  const __m256d u23_low = _mm256_castps_pd(_mm256_unpacklo_ps(u[2], u[3]));
  const __m256d u23_high = _mm256_castps_pd(_mm256_unpackhi_ps(u[2], u[3]));
  // Each holds two whole blocks: {0, 4}, {1, 5}, {2, 6}, {3, 7} (low half, high half).
  const __m256 blocks04 = _mm256_castpd_ps(_mm256_unpacklo_pd(u01_low, u23_low));
  const __m256 blocks15 = _mm256_castpd_ps(_mm256_unpackhi_pd(u01_low, u23_low));
  const __m256 blocks26 = _mm256_castpd_ps(_mm256_unpacklo_pd(u01_high, u23_high));
  const __m256 blocks37 = _mm256_castpd_ps(_mm256_unpackhi_pd(u01_high, u23_high));
  _mm256_storeu_ps(out, _mm256_permute2f128_ps(blocks04, blocks15, 0x20));
  _mm256_storeu_ps(out + 8, _mm256_permute2f128_ps(blocks26, blocks37, 0x20));
  _mm256_storeu_ps(out + 16, _mm256_permute2f128_ps(blocks04, blocks15, 0x31));
  _mm256_storeu_ps(out + 24, _mm256_permute2f128_ps(blocks26, blocks37, 0x31));
}

// The uniforms of blocks [first_block, first_block + 8 * steps) into out (4 per block).
// The caller keeps every block index below 2^32.
XLMR_TARGET_AVX2 void BlockUniformsAvx2(const DropoutSite& site, int64_t first_block,
                                        int64_t steps, float* out) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t step = 0; step < steps; ++step) {
    const uint32_t block = static_cast<uint32_t>(first_block + step * kBlocksPerStep);
    __m256i c[4] = {_mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(block)), lane),
                    _mm256_set1_epi32(static_cast<int>(site.counter1)),
                    _mm256_set1_epi32(static_cast<int>(site.counter2)),
                    _mm256_set1_epi32(static_cast<int>(site.counter3))};
    uint32_t key0 = site.key0, key1 = site.key1;
    for (int round = 0; round < 10; ++round) {  // Philox4x32_10
      if (round > 0) {
        key0 += philox_internal::kKeyBump0;
        key1 += philox_internal::kKeyBump1;
      }
      PhiloxRound(c, key0, key1);
    }
    const __m256 u[4] = {UniformsFromWords(c[0]), UniformsFromWords(c[1]),
                         UniformsFromWords(c[2]), UniformsFromWords(c[3])};
    StoreBlockMajor(u, out + step * kElementsPerStep);
  }
}

}  // namespace

void DropoutUniformsVectorized(const DropoutKey& key, int64_t begin, int64_t count, float* out) {
  XLMR_CHECK(begin >= 0 && count >= 0 && begin + count <= kMaxDropoutElements)
      << "dropout elements [" << begin << ", " << begin + count << ")";
  const int64_t end = begin + count;
  // Whole steps from the first block boundary; the elements around them take the scalar path.
  const int64_t first = std::min(end, (begin + 3) / 4 * 4);
  const int64_t steps = CpuHasAvx2() ? (end - first) / kElementsPerStep : 0;
  if (steps == 0) {
    DropoutUniforms(key, begin, count, out);
    return;
  }
  const int64_t vector_end = first + steps * kElementsPerStep;
  DropoutUniforms(key, begin, first - begin, out);
  BlockUniformsAvx2(DropoutSiteOf(key), first / 4, steps, out + (first - begin));
  DropoutUniforms(key, vector_end, end - vector_end, out + (vector_end - begin));
}

}  // namespace xlmr::kernels::cpu
