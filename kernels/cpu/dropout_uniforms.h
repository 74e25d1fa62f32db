// The dropout mask's uniforms (framework/random/philox.h) for the CPU kernels, eight Philox
// blocks at a time with AVX2 when the CPU has it.
//
// Philox is integer arithmetic and UniformFromWord converts a 24-bit integer exactly, so the
// vectorised path returns bit for bit what DropoutUniforms returns; without AVX2 this calls
// DropoutUniforms. As on the GPU (kernels/cuda/philox_device.cuh), the DropoutKey packing is not
// re-implemented: the Philox key and the upper counter words come from framework/random's
// DropoutPhiloxKey / DropoutCounter, and only the block index (element / 4) varies here.
#ifndef XLMR_KERNELS_CPU_DROPOUT_UNIFORMS_H_
#define XLMR_KERNELS_CPU_DROPOUT_UNIFORMS_H_

#include <cstdint>

#include "framework/random/philox.h"

namespace xlmr::kernels::cpu {

// [out] out: DropoutUniform(key, begin + i) for i in [0, count). Same contract and checks as
// xlmr::DropoutUniforms (begin >= 0, begin + count <= kMaxDropoutElements, layer and op
// < 2^16), same results; reentrant (no state), so threads may call it on disjoint ranges.
void DropoutUniformsVectorized(const DropoutKey& key, int64_t begin, int64_t count, float* out);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_DROPOUT_UNIFORMS_H_
