// The CPU backend's matrix products: OpenBLAS sgemm, spread over the CPU threads by this
// backend's own pool (parallel.h) rather than by OpenBLAS's threads.
//
// Why: OpenBLAS's idle threads poll with sched_yield between calls, and with our element-wise
// kernels on the same cores the two pools took turns spinning (a quarter of a 2-thread step's
// samples in the scheduler). Here OpenBLAS runs every call on the calling thread (parallel.cc
// sets its thread count to 1 when the library loads, CpuThreadCount()), and a product is cut
// into blocks of rows of C whose count depends on the shape alone, each one sgemm call, run on
// the pool. So results are bit-identical for every thread count: the same calls compute the same
// elements whatever thread runs them.
#ifndef XLMR_KERNELS_CPU_GEMM_H_
#define XLMR_KERNELS_CPU_GEMM_H_

#include <cblas.h>

#include <cstdint>

namespace xlmr::kernels::cpu {

// C[m, n] = alpha * op(A)[m, k] * op(B)[k, n] + beta * C, row-major, as cblas_sgemm with
// CblasRowMajor; op(X) = X or X^T. Rows of C are split into at most kMaxGemmRowBlocks blocks of
// at least kMinGemmBlockRows rows (a multiple of 16), run on the CPU threads.
void Sgemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int64_t m, int64_t n, int64_t k,
           float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
           float* c, int64_t ldc);

inline constexpr int64_t kMaxGemmRowBlocks = 8;
inline constexpr int64_t kMinGemmBlockRows = 64;

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_GEMM_H_
