#include "kernels/cpu/gemm.h"

#include <algorithm>

#include "kernels/cpu/parallel.h"

namespace xlmr::kernels::cpu {
namespace {

// Rows per block: m split into as many blocks as fit kMinGemmBlockRows (at most
// kMaxGemmRowBlocks), rounded up to a multiple of 16 (the row count of the sgemm micro-kernel).
// A function of m alone, never of the thread count.
int64_t BlockRows(int64_t m) {
  const int64_t blocks = std::clamp<int64_t>(m / kMinGemmBlockRows, 1, kMaxGemmRowBlocks);
  const int64_t rows = (m + blocks - 1) / blocks;
  return (rows + 15) / 16 * 16;
}

}  // namespace

void Sgemm(CBLAS_TRANSPOSE trans_a, CBLAS_TRANSPOSE trans_b, int64_t m, int64_t n, int64_t k,
           float alpha, const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
           float* c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  const int64_t block_rows = BlockRows(m);
  const int64_t blocks = (m + block_rows - 1) / block_rows;
  ParallelFor(blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) {
      const int64_t row0 = block * block_rows;
      const int64_t rows = std::min(block_rows, m - row0);
      // Row r of op(A) starts at a + r * lda untransposed, at column r (a + r) transposed.
      const float* a_rows = trans_a == CblasNoTrans ? a + row0 * lda : a + row0;
      cblas_sgemm(CblasRowMajor, trans_a, trans_b, static_cast<int>(rows), static_cast<int>(n),
                  static_cast<int>(k), alpha, a_rows, static_cast<int>(lda), b,
                  static_cast<int>(ldb), beta, c + row0 * ldc, static_cast<int>(ldc));
    }
  });
}

}  // namespace xlmr::kernels::cpu
