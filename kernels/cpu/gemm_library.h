// What runs the CPU backend's matrix products: the GEMM library, the kernel core it chose for
// this CPU, the threads the backend uses, and what the CPU itself offers. Reported, never
// decided here: the first line of metrics.jsonl and --version of both binaries name it
// (docs/CONTRACT.md), so that a number can be traced to the code that produced it.
//
// Two views, kept apart because they differ: `cpu_features` is what the hardware reports (the
// CPU and the operating system together, as __builtin_cpu_supports reads them), `core` is the
// kernel set OpenBLAS picked (its own CPU detection under DYNAMIC_ARCH, or OPENBLAS_CORETYPE
// when that is set; OpenBLAS may pick a core older than the CPU, e.g. when its table does not
// know the model, or a forced one the CPU cannot run).
#ifndef XLMR_KERNELS_CPU_GEMM_LIBRARY_H_
#define XLMR_KERNELS_CPU_GEMM_LIBRARY_H_

#include <string>

namespace xlmr::kernels::cpu {

struct GemmLibrary {
  std::string name;      // "OpenBLAS"
  std::string config;    // openblas_get_config(): "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Zen MAX_THREADS=64"
  std::string core;      // openblas_get_corename(): "Zen", "Haswell", "SkylakeX", ...
  int threads = 1;       // CpuThreadCount() (parallel.h): each sgemm runs single-threaded on one of them
  // The CPU's vector features among avx2, fma, avx512f, avx512_bf16, amx_tile, amx_bf16 (in that
  // order, space-separated, /proc/cpuinfo's spelling; empty when it has none of them).
  std::string cpu_features;
  // The widest hand-written path of the kernels around the GEMMs (instruction_set.h):
  // "avx512", "avx2" or "scalar".
  std::string kernel_isa;
};

// Reads the above from OpenBLAS and the CPU (cheap; every call reads afresh).
GemmLibrary DescribeGemmLibrary();

// One line without newline: "OpenBLAS 0.3.21 ... MAX_THREADS=64; core Zen; 2 threads; CPU: avx2
// fma; kernels: avx2" (CPU: "none" when cpu_features is empty).
std::string GemmLibrarySummary(const GemmLibrary& library);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_GEMM_LIBRARY_H_
