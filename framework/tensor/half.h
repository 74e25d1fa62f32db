// IEEE 754 binary16 ("half") and bfloat16 conversions, bit-exact with CUDA's __float2half_rn
// / __float2bfloat16_rn: round to nearest, ties to even; overflow to +-inf; subnormals kept;
// NaN stays NaN (quiet). Used by the CPU backend so fp16 storage rounds and overflows exactly
// as on a GPU (which is what makes loss scaling testable without one).
#ifndef XLMR_FRAMEWORK_TENSOR_HALF_H_
#define XLMR_FRAMEWORK_TENSOR_HALF_H_

#include <cstdint>
#include <cstring>

namespace xlmr {

// Bit patterns of 16-bit floats; distinct types so they cannot be mixed up.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

inline uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float BitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Defined inline below: the CPU kernels convert every fp16 element through these.
inline Half FloatToHalf(float value);
inline float HalfToFloat(Half value);
inline BFloat16 FloatToBFloat16(float value);
inline float BFloat16ToFloat(BFloat16 value) { return BitsToFloat(uint32_t{value.bits} << 16); }

// Largest finite half: 65504.
constexpr float kHalfMax = 65504.0f;

inline Half FloatToHalf(float value) {
  const uint32_t f = FloatBits(value);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  const uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    const bool is_nan = abs > 0x7f800000u;
    return Half{static_cast<uint16_t>(sign | 0x7c00u | (is_nan ? 0x0200u : 0u))};
  }
  // Values >= 65520 round to infinity (65504 is the largest finite, halfway is 65520).
  if (abs >= 0x477ff000u) return Half{static_cast<uint16_t>(sign | 0x7c00u)};
  const int exponent = static_cast<int>(abs >> 23) - 127;
  if (exponent < -25) return Half{sign};  // below half the smallest subnormal: +-0
  uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;  // implicit leading one
  int shift;                                          // bits of the 24-bit mantissa to drop
  uint32_t biased_exponent;
  if (exponent < -14) {  // subnormal half: value = m * 2^-24
    shift = 13 + (-14 - exponent);
    biased_exponent = 0;
  } else {
    shift = 13;
    biased_exponent = static_cast<uint32_t>(exponent + 15);
    mantissa &= 0x7fffffu;
  }
  uint32_t result = mantissa >> shift;
  const uint32_t remainder = mantissa & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (result & 1u))) ++result;
  // A carry out of the mantissa correctly bumps the exponent (or subnormal -> normal).
  const uint32_t bits = (biased_exponent << 10) + result;
  return Half{static_cast<uint16_t>(sign | bits)};
}

inline float HalfToFloat(Half value) {
  const uint32_t sign = static_cast<uint32_t>(value.bits & 0x8000u) << 16;
  const uint32_t exponent = (value.bits >> 10) & 0x1fu;
  uint32_t mantissa = value.bits & 0x3ffu;
  if (exponent == 0x1f) return BitsToFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0) return BitsToFloat(sign);
    // Subnormal: normalise.
    int e = -1;
    do {
      ++e;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    mantissa &= 0x3ffu;
    return BitsToFloat(sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | (mantissa << 13));
  }
  return BitsToFloat(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

// As CUDA's __float2bfloat16_rn: the top 16 bits of the float, plus one when the 16 bits dropped
// are above half, or exactly half with an odd result (ties to even; carries move into the
// exponent, so the largest floats round to inf and float subnormals stay bf16 subnormals); every
// NaN becomes CUDA's canonical NaN 0x7fff (cuda_bf16.hpp; PyTorch's CPU gives 0x7fc0: both are
// NaN, nothing reads the payload). tests/framework/tensor/half_test.cc checks the rules,
// tests/gpu/bf16_rounding_test.cc every float against cuda_bf16.h's own host conversion.
inline BFloat16 FloatToBFloat16(float value) {
  uint32_t f = FloatBits(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return BFloat16{0x7fffu};
  const uint32_t rounding_bias = 0x7fffu + ((f >> 16) & 1u);
  return BFloat16{static_cast<uint16_t>((f + rounding_bias) >> 16)};
}

}  // namespace xlmr

#endif  // XLMR_FRAMEWORK_TENSOR_HALF_H_
