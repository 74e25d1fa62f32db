// The dropout mask's uniforms (framework/random/philox.h) for the CPU kernels: sixteen Philox
// blocks at a time with AVX-512, eight with AVX2, whichever the CPU has (best first).
//
// Philox is integer arithmetic and UniformFromWord converts a 24-bit integer exactly, so the
// vectorised paths return bit for bit what DropoutUniforms returns; without AVX2 this calls
// DropoutUniforms. A range of any length and alignment takes the vector path: the steps that
// straddle its ends are computed whole into a buffer and the part inside is copied (a short
// row of attention probabilities costs one step, not a scalar Philox call per four elements). As on the GPU (kernels/cuda/philox_device.cuh), the DropoutKey packing is not
// re-implemented: the Philox key and the upper counter words come from framework/random's
// DropoutPhiloxKey / DropoutCounter, and only the block index (element / 4) varies here.
#ifndef XLMR_KERNELS_CPU_DROPOUT_UNIFORMS_H_
#define XLMR_KERNELS_CPU_DROPOUT_UNIFORMS_H_

#include <cstdint>

#include "framework/random/philox.h"
#include "kernels/cpu/instruction_set.h"

namespace xlmr::kernels::cpu {

// [out] out: DropoutUniform(key, begin + i) for i in [0, count). Same contract and checks as
// xlmr::DropoutUniforms (begin >= 0, begin + count <= kMaxDropoutElements, layer and op
// < 2^16), same results; reentrant (no state), so threads may call it on disjoint ranges.
void DropoutUniformsVectorized(const DropoutKey& key, int64_t begin, int64_t count, float* out);

namespace dropout_uniforms_internal {

// DropoutUniformsVectorized on the given instruction set, for tests that check each one against
// DropoutUniforms on a CPU that would pick only the widest; the CPU must support it (checked).
void DropoutUniformsWith(InstructionSet isa, const DropoutKey& key, int64_t begin, int64_t count,
                         float* out);

}  // namespace dropout_uniforms_internal

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_DROPOUT_UNIFORMS_H_
