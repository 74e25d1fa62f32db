// BLIS for bench/gemm_bench.cc, loaded with dlopen: libblis exports cblas_sgemm and sgemm_ as
// OpenBLAS does, so linking both would leave one of them calling the other's code. Loaded
// RTLD_LOCAL | RTLD_DEEPBIND, BLIS's symbols stay out of the binary's global scope and BLIS
// resolves its own first. Only this file's .cc includes blis.h (its cblas declarations clash
// with OpenBLAS's cblas.h).
#ifndef XLMR_BENCH_BLIS_GEMM_H_
#define XLMR_BENCH_BLIS_GEMM_H_

#include <cstdint>
#include <string>

namespace xlmr::bench {

// Loads libblis.so.4; false (with *error set) when it is missing.
bool LoadBlis(std::string* error);

// "BLIS <version>, arch <name>, <n> thread(s), bli_sgemm from <path of the loaded library>".
// After LoadBlis.
std::string BlisDescription();

// bli_thread_set_num_threads.
void BlisSetThreads(int threads);

// C[m, n] = alpha * op(A) * op(B) + beta * C, row-major with leading dimensions, as cblas_sgemm
// with CblasRowMajor; calls bli_sgemm with row strides lda/ldb/ldc and column stride 1.
void BlisSgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
               int64_t ldc);

}  // namespace xlmr::bench

#endif  // XLMR_BENCH_BLIS_GEMM_H_
