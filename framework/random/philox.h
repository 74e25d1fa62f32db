// Counter-based random numbers: Philox4x32-10 (Salmon, Moraes, Dror, Shaw, "Parallel random
// numbers: as easy as 1, 2, 3", SC 2011), the generator behind cuRAND's and PyTorch's philox.
//
// A counter-based generator has no state to carry: the output is a pure function of (counter,
// key). Dropout uses that to make every mask element a pure function of a DropoutKey and the
// element's index, so a recompute before backward, the backward itself and the GPU all
// regenerate the identical mask without storing it or any RNG state.
#ifndef XLMR_FRAMEWORK_RANDOM_PHILOX_H_
#define XLMR_FRAMEWORK_RANDOM_PHILOX_H_

#include <array>
#include <cstdint>

namespace xlmr {

using PhiloxCounter = std::array<uint32_t, 4>;  // 128-bit counter, word 0 least significant
using PhiloxKey = std::array<uint32_t, 2>;      // 64-bit key
using PhiloxOutput = std::array<uint32_t, 4>;   // four independent 32-bit random words

namespace philox_internal {

inline constexpr uint32_t kMultiplier0 = 0xD2511F53u;
inline constexpr uint32_t kMultiplier1 = 0xCD9E8D57u;
inline constexpr uint32_t kKeyBump0 = 0x9E3779B9u;  // golden ratio
inline constexpr uint32_t kKeyBump1 = 0xBB67AE85u;  // sqrt(3) - 1

inline PhiloxCounter Round(const PhiloxCounter& c, const PhiloxKey& k) {
  const uint64_t product0 = uint64_t{kMultiplier0} * c[0];
  const uint64_t product1 = uint64_t{kMultiplier1} * c[2];
  const uint32_t hi0 = static_cast<uint32_t>(product0 >> 32);
  const uint32_t lo0 = static_cast<uint32_t>(product0);
  const uint32_t hi1 = static_cast<uint32_t>(product1 >> 32);
  const uint32_t lo1 = static_cast<uint32_t>(product1);
  return {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

}  // namespace philox_internal

// Philox4x32 with 10 rounds (the variant with published known-answer vectors).
inline PhiloxOutput Philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += philox_internal::kKeyBump0;
      key[1] += philox_internal::kKeyBump1;
    }
    counter = philox_internal::Round(counter, key);
  }
  return counter;
}

// A uniform float in [0, 1) from the top 24 bits of a random word: (word >> 8) * 2^-24.
// Every value is exactly representable, so CPU and GPU agree bit for bit.
inline float UniformFromWord(uint32_t word) {
  return static_cast<float>(word >> 8) * (1.0f / 16777216.0f);
}

// Identifies one dropout site in one micro-step of training.
struct DropoutKey {
  uint64_t seed = 0;        // the run's seed
  uint32_t step = 0;        // optimizer step
  uint32_t micro_step = 0;  // micro-step within the accumulation window
  uint32_t layer = 0;       // < 2^16: encoder block (or any site group)
  uint32_t op = 0;          // < 2^16: which dropout inside the layer
  // CUDA only, or null: where the device reads `step` when the kernel runs (the step's
  // StepInputs, framework/ops/step_decisions.h), so that a captured step replays with each
  // step's masks; it must hold `step`'s value by then. The mask is the same function of the key.
  const uint32_t* step_on_device = nullptr;
};

// Largest element index a dropout mask may address: the Philox block index (element / 4)
// must fit in 32 bits.
inline constexpr int64_t kMaxDropoutElements = int64_t{1} << 34;

// The Philox inputs for mask elements [4 * block, 4 * block + 4) of `key`. The packing is
// injective for layer < 2^16, op < 2^16 and block < 2^32 (checked):
//   Philox key     = {seed low 32 bits, seed high 32 bits}
//   Philox counter = {block, (op << 16) | layer, micro_step, step}
PhiloxKey DropoutPhiloxKey(const DropoutKey& key);
PhiloxCounter DropoutCounter(const DropoutKey& key, int64_t block);

// Uniform value of mask element `index`: word (index % 4) of the Philox output for block
// index / 4, through UniformFromWord. Dropout keeps element `index` iff this is >= p.
float DropoutUniform(const DropoutKey& key, int64_t index);

// [out] out: DropoutUniform(key, begin + i) for i in [0, count), computed with one Philox call
// per block of four (the fast path for kernels).
void DropoutUniforms(const DropoutKey& key, int64_t begin, int64_t count, float* out);

}  // namespace xlmr

#endif  // XLMR_FRAMEWORK_RANDOM_PHILOX_H_
