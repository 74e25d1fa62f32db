#include "kernels/cpu/instruction_set.h"

#include <initializer_list>

namespace xlmr::kernels::cpu {
namespace {

// a * b + c, which GCC contracts into one fused multiply-add where the clone's target has FMA
// (contraction is allowed here alone; the kernels' libraries build with -ffp-contract=off).
XLMR_INSTRUCTION_SET_CLONES __attribute__((noinline, optimize("fp-contract=fast")))
float MultiplyAddAsCloned(float a, float b, float c) { return a * b + c; }

}  // namespace

bool CpuSupports(InstructionSet isa) {
  switch (isa) {
    case InstructionSet::kAvx512: return DetectCpuVectorFeatures().avx512f;
    case InstructionSet::kAvx2: return DetectCpuVectorFeatures().avx2;
    case InstructionSet::kScalar: return true;
  }
  return false;
}

const CpuVectorFeatures& DetectCpuVectorFeatures() {
  static const CpuVectorFeatures features = [] {
    CpuVectorFeatures cpu;
    cpu.avx = __builtin_cpu_supports("avx");
    cpu.avx2 = __builtin_cpu_supports("avx2");
    cpu.fma = __builtin_cpu_supports("fma");
    cpu.avx512f = __builtin_cpu_supports("avx512f");
    cpu.avx512_skylake = cpu.avx512f && __builtin_cpu_supports("avx512cd") &&
                         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                         __builtin_cpu_supports("avx512vl");
    cpu.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
    cpu.amx_tile = __builtin_cpu_supports("amx-tile");
    cpu.amx_bf16 = __builtin_cpu_supports("amx-bf16");
    return cpu;
  }();
  return features;
}

InstructionSet WidestInstructionSet() {
  static const InstructionSet widest = [] {
    for (InstructionSet isa : {InstructionSet::kAvx512, InstructionSet::kAvx2}) {
      if (CpuSupports(isa)) return isa;
    }
    return InstructionSet::kScalar;
  }();
  return widest;
}

bool ClonedLoopsFuseMultiplyAdd() {
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: rounded to float the 2^-24 is lost (a tie, to even), so
  // subtracting 1 + 2^-11 gives 0 from two roundings and 2^-24 from a fused one. volatile keeps
  // the compiler from folding the call at build time.
  volatile float a = 1.0f + 0x1p-12f;
  volatile float c = -(1.0f + 0x1p-11f);
  return MultiplyAddAsCloned(a, a, c) != 0.0f;
}

}  // namespace xlmr::kernels::cpu
