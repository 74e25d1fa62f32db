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

Half FloatToHalf(float value);
float HalfToFloat(Half value);
BFloat16 FloatToBFloat16(float value);
inline float BFloat16ToFloat(BFloat16 value) { return BitsToFloat(uint32_t{value.bits} << 16); }

// Largest finite half: 65504.
constexpr float kHalfMax = 65504.0f;

}  // namespace xlmr

#endif  // XLMR_FRAMEWORK_TENSOR_HALF_H_
