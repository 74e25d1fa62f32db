// Instruction-set selection for the CPU kernels, in one place. The build targets plain x86-64
// (no -march), so one binary runs on any x86-64 CPU; the hot loops still use the widest vectors
// the CPU has, picked at run time in one of two ways:
//
//   * XLMR_INSTRUCTION_SET_CLONES before a function of plain loops that the compiler vectorises
//     itself: GCC builds it three times, for AVX-512 (x86-64-v4), for AVX2 + FMA (x86-64-v3) and
//     for plain x86-64, and the loader picks the clone this CPU runs. The library adds
//     -fvect-cost-model=dynamic (GCC 12's -O2 leaves loops of unknown length scalar).
//     The levels are named x86-64-vN, never by a processor: GCC picks a clone named
//     "arch=haswell" only on a CPU whose model *is* Haswell (__builtin_cpu_is), so on an AMD Zen
//     or a later Intel without AVX-512 every such loop ran its plain x86-64 clone, scalar, with
//     a libm call for each std::fma. ClonedLoopsFuseMultiplyAdd() lets a test see the choice.
//   * XLMR_TARGET_AVX2 / XLMR_TARGET_AVX512 on hand-written intrinsics, called only when
//     CpuSupports says so (WidestInstructionSet picks for a kernel).
//
// The results must not depend on the CPU (DECISIONS.md, "Instruction sets"): every variant
// performs the same IEEE operations in the same order. Where a loop multiplies and then adds,
// its library is built with -ffp-contract=off, or the FMA clones would fuse what the plain one
// rounds twice; the hand-written paths enable no FMA at all.
#ifndef XLMR_KERNELS_CPU_INSTRUCTION_SET_H_
#define XLMR_KERNELS_CPU_INSTRUCTION_SET_H_

#define XLMR_INSTRUCTION_SET_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

// Per function rather than -mavx2 / -mavx512f for a whole file, so that the rest of the file
// (the scalar fallback included) keeps running on CPUs without them.
#define XLMR_TARGET_AVX2 __attribute__((target("avx2")))
#define XLMR_TARGET_AVX512 __attribute__((target("avx512f")))

namespace xlmr::kernels::cpu {

// The hand-written vector paths, narrowest first.
enum class InstructionSet { kScalar, kAvx2, kAvx512 };

// Whether this CPU runs `isa` (kScalar: always).
bool CpuSupports(InstructionSet isa);

// The vector features the CPU and the operating system offer together (__builtin_cpu_supports),
// as the run record reports them and as the OpenBLAS core choice (gemm_core_choice.h) reads them.
struct CpuVectorFeatures {
  bool avx = false;
  bool avx2 = false;
  bool fma = false;
  bool avx512f = false;
  bool avx512_skylake = false;  // avx512f, cd, bw, dq and vl: what OpenBLAS's SkylakeX kernels use
  bool avx512_bf16 = false;
  bool amx_tile = false;
  bool amx_bf16 = false;
};

// This CPU's (read once).
const CpuVectorFeatures& DetectCpuVectorFeatures();

// The widest instruction set this CPU supports (read once).
InstructionSet WidestInstructionSet();

// Whether XLMR_INSTRUCTION_SET_CLONES functions run a clone with FMA instructions on this CPU
// (x86-64-v3 or v4; the plain x86-64 clone has none). Observed, not assumed: a cloned probe
// computes a * b + c with contraction allowed, and the answer shows whether it was fused. On a
// CPU with AVX2 and FMA it must be true, or the cloned loops run scalar.
bool ClonedLoopsFuseMultiplyAdd();

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_INSTRUCTION_SET_H_
