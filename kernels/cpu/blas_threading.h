// When OpenBLAS computes a GEMM on the calling thread alone. The attention kernels spread
// independent heads or tiles over the CPU threads (parallel.h) only when each of their GEMMs is
// single-threaded inside OpenBLAS: a GEMM that OpenBLAS threads itself rounds differently from
// a single-threaded one, and would nest OpenBLAS's threads inside ours.
#ifndef XLMR_KERNELS_CPU_BLAS_THREADING_H_
#define XLMR_KERNELS_CPU_BLAS_THREADING_H_

#include <cstdint>

namespace xlmr::kernels::cpu {

// OpenBLAS runs a GEMM of m x n x k on the calling thread when m * n * k <= 65536 *
// GEMM_MULTITHREAD_THRESHOLD (4 unless OpenBLAS was built otherwise; interface/gemm.c).
inline constexpr double kOpenBlasSingleThreadedMaxMnk = 65536.0 * 4;

inline bool GemmRunsOnTheCallingThread(int64_t m, int64_t n, int64_t k) {
  return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) <=
         kOpenBlasSingleThreadedMaxMnk;
}

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_BLAS_THREADING_H_
