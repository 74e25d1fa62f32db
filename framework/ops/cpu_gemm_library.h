// What runs the CPU backend's matrix products (kernels/cpu/gemm_library.h), for the layers
// above framework/ops: the trainer's first metrics.jsonl line and the binaries' --version.
#ifndef XLMR_FRAMEWORK_OPS_CPU_GEMM_LIBRARY_H_
#define XLMR_FRAMEWORK_OPS_CPU_GEMM_LIBRARY_H_

#include "kernels/cpu/gemm_library.h"

namespace xlmr::ops {

using CpuGemmLibrary = kernels::cpu::GemmLibrary;

// The library, its chosen core, the threads and the CPU's features, read now.
inline CpuGemmLibrary DescribeCpuGemmLibrary() { return kernels::cpu::DescribeGemmLibrary(); }

// One line without newline (kernels::cpu::GemmLibrarySummary).
inline std::string CpuGemmLibrarySummary(const CpuGemmLibrary& library) {
  return kernels::cpu::GemmLibrarySummary(library);
}

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_CPU_GEMM_LIBRARY_H_
