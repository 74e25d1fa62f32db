#include "kernels/cpu/gelu_math.h"

#include <immintrin.h>

#include <cmath>

#include "kernels/cpu/instruction_set.h"

// The vector paths enable no FMA (instruction_set.h's target macros): a fused multiply-add
// rounds once where the scalar path rounds twice.

namespace xlmr::kernels::cpu {
namespace {

// kCenters, kErfCoefficients, kExpNegSquareCoefficients.
#include "kernels/cpu/gelu_tables.inc"

constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;
// Interval i of |z| is [i / kIndexScale, (i + 1) / kIndexScale); from kSaturated / kIndexScale
// (4.57) on, erf(|z|) rounds to 1 in fp32 and exp(-z^2) < 1e-9 is taken as 0 (x * phi(x) below
// 2^-28 where it is dropped from the derivative).
constexpr float kIndexScale = 1.75f;
constexpr float kLastInterval = 7.0f;
constexpr float kSaturated = 8.0f;
constexpr int kDegree = 7;

// Each polynomial is evaluated by Horner's rule, from the t^7 coefficient down.
inline float Polynomial(const float (&table)[kDegree + 1][8], int interval, float t) {
  float p = table[kDegree][interval];
  for (int k = kDegree - 1; k >= 0; --k) p = p * t + table[k][interval];
  return p;
}

// erf(|z|) and exp(-z^2) of a = |z| (NaN for NaN).
struct ErfAndExp {
  float erf_abs;
  float exp_neg_square;
};

inline ErfAndExp EvaluateAbs(float a) {
  const float scaled = a * kIndexScale;
  if (scaled >= kSaturated) return {1.0f, 0.0f};
  // The comparison sends NaN to the last interval, as _mm256_min_ps does below.
  const int interval = scaled < kLastInterval ? static_cast<int>(scaled) : 7;
  const float t = a - kCenters[interval];
  return {Polynomial(kErfCoefficients, interval, t),
          Polynomial(kExpNegSquareCoefficients, interval, t)};
}

inline float GeluScalar(float v) {
  const float z = v * kInvSqrt2;
  const float erf = std::copysign(EvaluateAbs(std::fabs(z)).erf_abs, z);
  return 0.5f * v * (1.0f + erf);
}

inline float GeluGradScalar(float grad, float v) {
  const float z = v * kInvSqrt2;
  const ErfAndExp e = EvaluateAbs(std::fabs(z));
  const float cdf = 0.5f * (1.0f + std::copysign(e.erf_abs, z));
  const float pdf = kInvSqrt2Pi * e.exp_neg_square;
  return grad * (cdf + v * pdf);
}

// The same operations as EvaluateAbs on eight lanes: the coefficients of each lane's interval
// are picked from the tables' rows with a lane permutation (eight intervals, eight lanes).
XLMR_TARGET_AVX2 inline __m256 PolynomialAvx2(const float (&table)[kDegree + 1][8],
                                              __m256i interval, __m256 t) {
  __m256 p = _mm256_permutevar8x32_ps(_mm256_load_ps(table[kDegree]), interval);
  for (int k = kDegree - 1; k >= 0; --k) {
    p = _mm256_add_ps(_mm256_mul_ps(p, t),
                      _mm256_permutevar8x32_ps(_mm256_load_ps(table[k]), interval));
  }
  return p;
}

// Returns erf(z) for z = v / sqrt(2) lane by lane; *exp_neg_square gets exp(-z^2) when not null.
XLMR_TARGET_AVX2 inline __m256 ErfAvx2(__m256 z, __m256* exp_neg_square) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  const __m256 a = _mm256_andnot_ps(sign_bit, z);
  const __m256 scaled = _mm256_mul_ps(a, _mm256_set1_ps(kIndexScale));
  // min(scaled, 7) is 7 for NaN (the second operand is returned), like the scalar comparison.
  const __m256i interval =
      _mm256_cvttps_epi32(_mm256_min_ps(scaled, _mm256_set1_ps(kLastInterval)));
  const __m256 t = _mm256_sub_ps(a, _mm256_permutevar8x32_ps(_mm256_load_ps(kCenters), interval));
  const __m256 saturated = _mm256_cmp_ps(scaled, _mm256_set1_ps(kSaturated), _CMP_GE_OQ);
  const __m256 erf_abs = _mm256_blendv_ps(PolynomialAvx2(kErfCoefficients, interval, t),
                                          _mm256_set1_ps(1.0f), saturated);
  if (exp_neg_square != nullptr) {
    *exp_neg_square = _mm256_blendv_ps(PolynomialAvx2(kExpNegSquareCoefficients, interval, t),
                                       _mm256_setzero_ps(), saturated);
  }
  return _mm256_or_ps(erf_abs, _mm256_and_ps(sign_bit, z));  // copysign(erf_abs, z)
}

// ErfAvx2 on sixteen lanes: the same operations, with the interval's coefficients picked by a
// 16-lane permutation of the table's eight-entry row (indices 0..7 read only its lower half).
XLMR_TARGET_AVX512 inline __m512 TableLookup512(const float (&row)[8], __m512i interval) {
  return _mm512_permutexvar_ps(interval, _mm512_castps256_ps512(_mm256_load_ps(row)));
}

XLMR_TARGET_AVX512 inline __m512 Polynomial512(const float (&table)[kDegree + 1][8],
                                               __m512i interval, __m512 t) {
  __m512 p = TableLookup512(table[kDegree], interval);
  for (int k = kDegree - 1; k >= 0; --k) {
    p = _mm512_add_ps(_mm512_mul_ps(p, t), TableLookup512(table[k], interval));
  }
  return p;
}

XLMR_TARGET_AVX512 inline __m512 Erf512(__m512 z, __m512* exp_neg_square) {
  const __m512i sign_bit = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  const __m512i z_bits = _mm512_castps_si512(z);
  const __m512 a = _mm512_castsi512_ps(_mm512_andnot_epi32(sign_bit, z_bits));
  const __m512 scaled = _mm512_mul_ps(a, _mm512_set1_ps(kIndexScale));
  // min(scaled, 7) is 7 for NaN (the second operand is returned), as on AVX2.
  const __m512i interval =
      _mm512_cvttps_epi32(_mm512_min_ps(scaled, _mm512_set1_ps(kLastInterval)));
  const __m512 t = _mm512_sub_ps(a, TableLookup512(kCenters, interval));
  const __mmask16 saturated = _mm512_cmp_ps_mask(scaled, _mm512_set1_ps(kSaturated), _CMP_GE_OQ);
  const __m512 erf_abs = _mm512_mask_blend_ps(
      saturated, Polynomial512(kErfCoefficients, interval, t), _mm512_set1_ps(1.0f));
  if (exp_neg_square != nullptr) {
    *exp_neg_square = _mm512_mask_blend_ps(
        saturated, Polynomial512(kExpNegSquareCoefficients, interval, t), _mm512_setzero_ps());
  }
  // copysign(erf_abs, z)
  return _mm512_castsi512_ps(
      _mm512_or_epi32(_mm512_castps_si512(erf_abs), _mm512_and_epi32(sign_bit, z_bits)));
}

}  // namespace

namespace gelu_internal {

float Erf(float z) { return std::copysign(EvaluateAbs(std::fabs(z)).erf_abs, z); }
float ExpNegSquare(float z) { return EvaluateAbs(std::fabs(z)).exp_neg_square; }

void GeluForwardScalar(const float* x, int64_t n, float* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = GeluScalar(x[i]);
}

void GeluBackwardScalar(const float* dy, const float* x, int64_t n, float* dx) {
  for (int64_t i = 0; i < n; ++i) dx[i] = GeluGradScalar(dy[i], x[i]);
}

XLMR_TARGET_AVX2 void GeluForwardAvx2(const float* x, int64_t n, float* y) {
  const int64_t vector_end = n / 8 * 8;
  for (int64_t i = 0; i < vector_end; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256 erf = ErfAvx2(_mm256_mul_ps(v, _mm256_set1_ps(kInvSqrt2)), nullptr);
    const __m256 half_v = _mm256_mul_ps(_mm256_set1_ps(0.5f), v);
    _mm256_storeu_ps(y + i, _mm256_mul_ps(half_v, _mm256_add_ps(_mm256_set1_ps(1.0f), erf)));
  }
  GeluForwardScalar(x + vector_end, n - vector_end, y + vector_end);
}

XLMR_TARGET_AVX2 void GeluBackwardAvx2(const float* dy, const float* x, int64_t n, float* dx) {
  const int64_t vector_end = n / 8 * 8;
  for (int64_t i = 0; i < vector_end; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    __m256 exp_neg_square;
    const __m256 erf = ErfAvx2(_mm256_mul_ps(v, _mm256_set1_ps(kInvSqrt2)), &exp_neg_square);
    const __m256 cdf =
        _mm256_mul_ps(_mm256_set1_ps(0.5f), _mm256_add_ps(_mm256_set1_ps(1.0f), erf));
    const __m256 pdf = _mm256_mul_ps(_mm256_set1_ps(kInvSqrt2Pi), exp_neg_square);
    const __m256 slope = _mm256_add_ps(cdf, _mm256_mul_ps(v, pdf));
    _mm256_storeu_ps(dx + i, _mm256_mul_ps(_mm256_loadu_ps(dy + i), slope));
  }
  GeluBackwardScalar(dy + vector_end, x + vector_end, n - vector_end, dx + vector_end);
}

// Sixteen lanes at a time; the rest (fewer than 16) through the AVX2 path, which gives the
// same bits and leaves its own remainder to the scalar path.
XLMR_TARGET_AVX512 void GeluForwardAvx512(const float* x, int64_t n, float* y) {
  const int64_t vector_end = n / 16 * 16;
  for (int64_t i = 0; i < vector_end; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512 erf = Erf512(_mm512_mul_ps(v, _mm512_set1_ps(kInvSqrt2)), nullptr);
    const __m512 half_v = _mm512_mul_ps(_mm512_set1_ps(0.5f), v);
    _mm512_storeu_ps(y + i, _mm512_mul_ps(half_v, _mm512_add_ps(_mm512_set1_ps(1.0f), erf)));
  }
  GeluForwardAvx2(x + vector_end, n - vector_end, y + vector_end);
}

XLMR_TARGET_AVX512 void GeluBackwardAvx512(const float* dy, const float* x, int64_t n,
                                           float* dx) {
  const int64_t vector_end = n / 16 * 16;
  for (int64_t i = 0; i < vector_end; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    __m512 exp_neg_square;
    const __m512 erf = Erf512(_mm512_mul_ps(v, _mm512_set1_ps(kInvSqrt2)), &exp_neg_square);
    const __m512 cdf =
        _mm512_mul_ps(_mm512_set1_ps(0.5f), _mm512_add_ps(_mm512_set1_ps(1.0f), erf));
    const __m512 pdf = _mm512_mul_ps(_mm512_set1_ps(kInvSqrt2Pi), exp_neg_square);
    const __m512 slope = _mm512_add_ps(cdf, _mm512_mul_ps(v, pdf));
    _mm512_storeu_ps(dx + i, _mm512_mul_ps(_mm512_loadu_ps(dy + i), slope));
  }
  GeluBackwardAvx2(dy + vector_end, x + vector_end, n - vector_end, dx + vector_end);
}

}  // namespace gelu_internal

void GeluForwardF32(const float* x, int64_t n, float* y) {
  switch (WidestInstructionSet()) {
    case InstructionSet::kAvx512: return gelu_internal::GeluForwardAvx512(x, n, y);
    case InstructionSet::kAvx2: return gelu_internal::GeluForwardAvx2(x, n, y);
    case InstructionSet::kScalar: return gelu_internal::GeluForwardScalar(x, n, y);
  }
}

void GeluBackwardF32(const float* dy, const float* x, int64_t n, float* dx) {
  switch (WidestInstructionSet()) {
    case InstructionSet::kAvx512: return gelu_internal::GeluBackwardAvx512(dy, x, n, dx);
    case InstructionSet::kAvx2: return gelu_internal::GeluBackwardAvx2(dy, x, n, dx);
    case InstructionSet::kScalar: return gelu_internal::GeluBackwardScalar(dy, x, n, dx);
  }
}

}  // namespace xlmr::kernels::cpu
