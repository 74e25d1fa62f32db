// Philox4x32-10 and the dropout uniforms on the device: the same arithmetic as
// framework/random/philox.h, so that a GPU dropout mask is bit for bit the CPU's.
//
// The DropoutKey packing is not re-implemented: DropoutSiteOf (host) takes the Philox key and
// the three upper counter words from framework/random's own DropoutPhiloxKey/DropoutCounter
// (which also check the layer/op ranges); only the lowest counter word, the block index
// element / 4, varies on the device.
//
// Device-side header: include it only from .cu files of kernels/cuda.
#ifndef XLMR_KERNELS_CUDA_PHILOX_DEVICE_CUH_
#define XLMR_KERNELS_CUDA_PHILOX_DEVICE_CUH_

#include <cuda_runtime.h>

#include <cstdint>

#include "framework/random/philox.h"

namespace xlmr::kernels::cuda {

// The Philox inputs of one dropout site, everything but the block index.
struct DropoutSite {
  uint32_t key0, key1;              // Philox key: seed low, seed high
  uint32_t counter1, counter2, counter3;  // (op << 16) | layer, micro_step, step
  const uint32_t* counter3_on_device;     // non-null: counter3 is read here (DropoutKey::step_on_device)
};

// Host: the packed inputs for `key`, from framework/random (aborts when layer or op >= 2^16).
inline DropoutSite DropoutSiteOf(const DropoutKey& key) {
  const PhiloxKey philox_key = DropoutPhiloxKey(key);
  const PhiloxCounter counter = DropoutCounter(key, /*block=*/0);
  return {philox_key[0], philox_key[1], counter[1], counter[2], counter[3], key.step_on_device};
}

// One Philox round (philox_internal::Round): the 32x32 -> 64-bit products split into their high
// (__umulhi) and low (wrapping multiply) words.
__device__ __forceinline__ uint4 PhiloxRound(uint4 c, uint32_t k0, uint32_t k1) {
  const uint32_t hi0 = __umulhi(philox_internal::kMultiplier0, c.x);
  const uint32_t lo0 = philox_internal::kMultiplier0 * c.x;
  const uint32_t hi1 = __umulhi(philox_internal::kMultiplier1, c.z);
  const uint32_t lo1 = philox_internal::kMultiplier1 * c.z;
  return make_uint4(hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0);
}

// Philox4x32 with 10 rounds; x is counter word 0 (least significant), as in philox.h.
__device__ __forceinline__ uint4 Philox4x32_10Device(uint4 counter, uint32_t k0, uint32_t k1) {
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += philox_internal::kKeyBump0;
      k1 += philox_internal::kKeyBump1;
    }
    counter = PhiloxRound(counter, k0, k1);
  }
  return counter;
}

// UniformFromWord: (word >> 8) * 2^-24, exact in fp32.
__device__ __forceinline__ float UniformFromWordDevice(uint32_t word) {
  return static_cast<float>(word >> 8) * (1.0f / 16777216.0f);
}

// The four random words of mask block `block` (elements 4 * block .. 4 * block + 3) of `site`;
// word i belongs to element 4 * block + i. block < 2^32 (the caller bounds the element count).
__device__ __forceinline__ uint4 DropoutBlockWords(const DropoutSite& site, uint32_t block) {
  const uint32_t counter3 = site.counter3_on_device != nullptr ? __ldg(site.counter3_on_device) : site.counter3;
  return Philox4x32_10Device(make_uint4(block, site.counter1, site.counter2, counter3), site.key0, site.key1);
}

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_PHILOX_DEVICE_CUH_
