// Making OpenBLAS run the kernels this CPU can, with no environment variable from the user.
//
// Debian's OpenBLAS (0.3.21, DYNAMIC_ARCH) picks its kernel set ("core") from a table of CPU
// models when it loads. A model missing from the table (a newer CPU, or a VM that reports a
// model of its own, e.g. an AVX-512 Xeon shown as model 85 without a name OpenBLAS knows) gets
// its generic Prescott (SSE3) kernels: 2.5x slower steps (docs/DECISIONS.md). Its one documented
// switch, OPENBLAS_CORETYPE, is read only when the library loads, before main(). So when the
// core it picked is narrower than the CPU's vectors, and the user has not set the switch, the
// program sets it to the core the CPU's features call for and restarts itself (execv of
// /proc/self/exe with the same arguments, the same process id) before doing anything else.
// A user's OPENBLAS_CORETYPE is never changed.
#ifndef XLMR_KERNELS_CPU_GEMM_CORE_CHOICE_H_
#define XLMR_KERNELS_CPU_GEMM_CORE_CHOICE_H_

#include <optional>
#include <string>
#include <string_view>

#include "kernels/cpu/instruction_set.h"

namespace xlmr::kernels::cpu {

// The OPENBLAS_CORETYPE to run on a CPU with `cpu`, when OpenBLAS picked `picked_core`
// (openblas_get_corename()): the core for the CPU's widest vectors (Cooperlake with AVX-512
// BF16, SkylakeX with AVX-512, Haswell with AVX2 and FMA, Sandybridge with AVX) when that is
// wider than the picked one's; nullopt when the picked core already uses the widest vectors
// the CPU has (Zen on an AMD with AVX2, SkylakeX on an AVX-512 Xeon), or is one this table
// does not know.
std::optional<std::string> WiderOpenBlasCore(std::string_view picked_core, const CpuVectorFeatures& cpu);

// Called first thing in main(): when OPENBLAS_CORETYPE is unset and WiderOpenBlasCore names a
// core, sets it and re-executes this program with `argv`. Returns (leaving the kernels as they
// are) when there is nothing to change or the restart is impossible.
void RestartWithWiderGemmKernelsIfNeeded(char** argv);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_GEMM_CORE_CHOICE_H_
