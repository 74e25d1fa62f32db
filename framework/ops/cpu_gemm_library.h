// What runs the CPU backend's matrix products (kernels/cpu/gemm_library.h), for the layers
// above framework/ops: the trainer's first metrics.jsonl line and the binaries' --version; and
// the binaries' restart onto OpenBLAS kernels as wide as the CPU (kernels/cpu/gemm_core_choice.h).
#ifndef XLMR_FRAMEWORK_OPS_CPU_GEMM_LIBRARY_H_
#define XLMR_FRAMEWORK_OPS_CPU_GEMM_LIBRARY_H_

#include "kernels/cpu/gemm_core_choice.h"
#include "kernels/cpu/gemm_library.h"

namespace xlmr::ops {

using CpuGemmLibrary = kernels::cpu::GemmLibrary;

// The library, its chosen core, the threads and the CPU's features, read now.
inline CpuGemmLibrary DescribeCpuGemmLibrary() { return kernels::cpu::DescribeGemmLibrary(); }

// One line without newline (kernels::cpu::GemmLibrarySummary).
inline std::string CpuGemmLibrarySummary(const CpuGemmLibrary& library) {
  return kernels::cpu::GemmLibrarySummary(library);
}

// First thing in a binary's main(): when OpenBLAS picked kernels narrower than this CPU's
// vectors and OPENBLAS_CORETYPE is unset, sets it and re-executes the program with `argv`.
inline void RestartWithWiderCpuGemmKernelsIfNeeded(char** argv) {
  kernels::cpu::RestartWithWiderGemmKernelsIfNeeded(argv);
}

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_CPU_GEMM_LIBRARY_H_
