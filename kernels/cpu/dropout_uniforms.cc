#include "kernels/cpu/dropout_uniforms.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "framework/core/check.h"
#include "kernels/cpu/instruction_set.h"

namespace xlmr::kernels::cpu {
namespace {

// The Philox inputs of one dropout site, everything but the block index (counter word 0).
struct DropoutSite {
  uint32_t key0, key1;
  uint32_t counter1, counter2, counter3;
};

DropoutSite DropoutSiteOf(const DropoutKey& key) {
  XLMR_CHECK(key.step_on_device == nullptr) << "a CPU dropout mask takes its step from the key, not from a device";
  const PhiloxKey philox_key = DropoutPhiloxKey(key);
  const PhiloxCounter counter = DropoutCounter(key, /*block=*/0);  // checks layer and op
  return {philox_key[0], philox_key[1], counter[1], counter[2], counter[3]};
}

// ---- AVX2: eight blocks (one per 32-bit lane) per step ----

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

// The uniforms of blocks [first_block, first_block + 8 * steps) into out (4 per block). Block
// indices wrap at 2^32 (only the partial steps at the counter space's end reach past it, and
// their extra elements are discarded).
XLMR_TARGET_AVX2 void BlockUniformsAvx2(const DropoutSite& site, int64_t first_block,
                                        int64_t steps, float* out) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int64_t step = 0; step < steps; ++step) {
    const uint32_t block = static_cast<uint32_t>(first_block + step * 8);
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
    StoreBlockMajor(u, out + step * 32);
  }
}

// ---- AVX-512: sixteen blocks per step, the same arithmetic on 512-bit registers ----

XLMR_TARGET_AVX512 inline void MultiplyHighLow(__m512i x, __m512i multiplier, __m512i* hi,
                                               __m512i* lo) {
  const __m512i even = _mm512_mul_epu32(x, multiplier);
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(x, 32), multiplier);
  *lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
  *hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
}

XLMR_TARGET_AVX512 inline void PhiloxRound(__m512i c[4], uint32_t key0, uint32_t key1) {
  __m512i hi0, lo0, hi1, lo1;
  MultiplyHighLow(c[0], _mm512_set1_epi32(static_cast<int>(philox_internal::kMultiplier0)), &hi0,
                  &lo0);
  MultiplyHighLow(c[2], _mm512_set1_epi32(static_cast<int>(philox_internal::kMultiplier1)), &hi1,
                  &lo1);
  const __m512i k0 = _mm512_set1_epi32(static_cast<int>(key0));
  const __m512i k1 = _mm512_set1_epi32(static_cast<int>(key1));
  c[0] = _mm512_xor_si512(_mm512_xor_si512(hi1, c[1]), k0);
  c[1] = lo1;
  c[2] = _mm512_xor_si512(_mm512_xor_si512(hi0, c[3]), k1);
  c[3] = lo0;
}

XLMR_TARGET_AVX512 inline __m512 UniformsFromWords(__m512i words) {
  return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(words, 8)),
                       _mm512_set1_ps(1.0f / 16777216.0f));
}

// Writes out[4 * b + w] = u[w] lane b for the sixteen blocks b. Within each 128-bit lane the
// unpacks transpose as on AVX2, leaving x[k] with blocks k, 4 + k, 8 + k, 12 + k in its four
// 128-bit lanes; two rounds of 128-bit-lane shuffles then gather blocks 0-3, 4-7, 8-11, 12-15.
XLMR_TARGET_AVX512 inline void StoreBlockMajor(const __m512 u[4], float* out) {
  const __m512d u01_low = _mm512_castps_pd(_mm512_unpacklo_ps(u[0], u[1]));
  const __m512d u01_high = _mm512_castps_pd(_mm512_unpackhi_ps(u[0], u[1]));
  const __m512d u23_low = _mm512_castps_pd(_mm512_unpacklo_ps(u[2], u[3]));
  const __m512d u23_high = _mm512_castps_pd(_mm512_unpackhi_ps(u[2], u[3]));
  const __m512 x0 = _mm512_castpd_ps(_mm512_unpacklo_pd(u01_low, u23_low));
  const __m512 x1 = _mm512_castpd_ps(_mm512_unpackhi_pd(u01_low, u23_low));
  const __m512 x2 = _mm512_castpd_ps(_mm512_unpacklo_pd(u01_high, u23_high));
  const __m512 x3 = _mm512_castpd_ps(_mm512_unpackhi_pd(u01_high, u23_high));
  // _mm512_shuffle_f32x4(a, b, imm): lanes 0, 1 from a and lanes 2, 3 from b, by imm's fields.
  const __m512 x01_low = _mm512_shuffle_f32x4(x0, x1, _MM_SHUFFLE(1, 0, 1, 0));
  const __m512 x23_low = _mm512_shuffle_f32x4(x2, x3, _MM_SHUFFLE(1, 0, 1, 0));
  const __m512 x01_high = _mm512_shuffle_f32x4(x0, x1, _MM_SHUFFLE(3, 2, 3, 2));
  const __m512 x23_high = _mm512_shuffle_f32x4(x2, x3, _MM_SHUFFLE(3, 2, 3, 2));
  _mm512_storeu_ps(out, _mm512_shuffle_f32x4(x01_low, x23_low, _MM_SHUFFLE(2, 0, 2, 0)));
  _mm512_storeu_ps(out + 16, _mm512_shuffle_f32x4(x01_low, x23_low, _MM_SHUFFLE(3, 1, 3, 1)));
  _mm512_storeu_ps(out + 32, _mm512_shuffle_f32x4(x01_high, x23_high, _MM_SHUFFLE(2, 0, 2, 0)));
  _mm512_storeu_ps(out + 48, _mm512_shuffle_f32x4(x01_high, x23_high, _MM_SHUFFLE(3, 1, 3, 1)));
}

XLMR_TARGET_AVX512 void BlockUniformsAvx512(const DropoutSite& site, int64_t first_block,
                                            int64_t steps, float* out) {
  const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (int64_t step = 0; step < steps; ++step) {
    const uint32_t block = static_cast<uint32_t>(first_block + step * 16);
    __m512i c[4] = {_mm512_add_epi32(_mm512_set1_epi32(static_cast<int>(block)), lane),
                    _mm512_set1_epi32(static_cast<int>(site.counter1)),
                    _mm512_set1_epi32(static_cast<int>(site.counter2)),
                    _mm512_set1_epi32(static_cast<int>(site.counter3))};
    uint32_t key0 = site.key0, key1 = site.key1;
    for (int round = 0; round < 10; ++round) {  // Philox4x32_10
      if (round > 0) {
        key0 += philox_internal::kKeyBump0;
        key1 += philox_internal::kKeyBump1;
      }
      PhiloxRound(c, key0, key1);
    }
    const __m512 u[4] = {UniformsFromWords(c[0]), UniformsFromWords(c[1]),
                         UniformsFromWords(c[2]), UniformsFromWords(c[3])};
    StoreBlockMajor(u, out + step * 64);
  }
}

// ---- Choosing and running a path ----

using BlockUniformsFn = void (*)(const DropoutSite&, int64_t first_block, int64_t steps,
                                 float* out);

struct VectorPath {
  int64_t blocks_per_step;
  BlockUniformsFn run;
};

constexpr int64_t kMaxStepElements = 64;

VectorPath PathFor(InstructionSet isa) {
  switch (isa) {
    case InstructionSet::kAvx512: return {16, BlockUniformsAvx512};
    case InstructionSet::kAvx2: return {8, BlockUniformsAvx2};
    case InstructionSet::kScalar: break;
  }
  return {0, nullptr};
}

void CheckRange(int64_t begin, int64_t count) {
  XLMR_CHECK(begin >= 0 && count >= 0 && begin + count <= kMaxDropoutElements)
      << "dropout elements [" << begin << ", " << begin + count << ")";
}

// Steps start on a block boundary at or before `begin`. A step wholly inside [begin, end)
// writes straight into out, runs of them in one call; a step straddling either end is computed
// into a buffer and its part inside the range copied.
void RunVectorPath(const VectorPath& path, const DropoutKey& key, int64_t begin, int64_t count,
                   float* out) {
  const DropoutSite site = DropoutSiteOf(key);
  const int64_t step_elements = 4 * path.blocks_per_step;
  const int64_t end = begin + count;
  for (int64_t at = begin / 4 * 4; at < end;) {
    const int64_t whole_steps = at >= begin ? (end - at) / step_elements : 0;
    if (whole_steps > 0) {
      path.run(site, at / 4, whole_steps, out + (at - begin));
      at += whole_steps * step_elements;
      continue;
    }
    float step_uniforms[kMaxStepElements];
    path.run(site, at / 4, 1, step_uniforms);
    const int64_t first = std::max(at, begin), last = std::min(at + step_elements, end);
    std::memcpy(out + (first - begin), step_uniforms + (first - at),
                static_cast<size_t>(last - first) * sizeof(float));
    at += step_elements;
  }
}

void UniformsWith(InstructionSet isa, const DropoutKey& key, int64_t begin, int64_t count,
                  float* out) {
  CheckRange(begin, count);
  if (count == 0) return;
  const VectorPath path = PathFor(isa);
  if (path.run == nullptr) {
    DropoutUniforms(key, begin, count, out);
    return;
  }
  RunVectorPath(path, key, begin, count, out);
}

}  // namespace

void DropoutUniformsVectorized(const DropoutKey& key, int64_t begin, int64_t count, float* out) {
  UniformsWith(WidestInstructionSet(), key, begin, count, out);
}

namespace dropout_uniforms_internal {

void DropoutUniformsWith(InstructionSet isa, const DropoutKey& key, int64_t begin, int64_t count,
                         float* out) {
  XLMR_CHECK(CpuSupports(isa)) << "this CPU lacks the instruction set asked for";
  UniformsWith(isa, key, begin, count, out);
}

}  // namespace dropout_uniforms_internal
}  // namespace xlmr::kernels::cpu
