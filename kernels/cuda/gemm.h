// Matrix multiplication on the GPU through cuBLASLt, for row-major tensors:
//
//   C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C[M,N]  (+ bias[N] on every row)
//
// op(X) is X or X^T. A and B are both f32, both f16 or both bf16; C is f32, f16 or bf16 (CUDA_R_16BF
// for bf16). Products are accumulated in fp32 (CUBLAS_COMPUTE_32F: true fp32 for f32 operands, never TF32; fp16 x fp16 -> fp32 on
// tensor cores), alpha, beta and the bias (f32, or f16/bf16 as autocast rounds it) are applied in
// fp32, and the result is rounded once to C's dtype. Plain C++ header (the cuBLASLt calls are in gemm.cc and gemm_plans.cc).
//
// Row-major vs cuBLASLt's column-major. A row-major matrix X[r,c] with leading dimension ld has
// exactly the bytes of the column-major matrix X^T[c,r] with the same ld. So the row-major
// product C = op(A) op(B) is computed as the column-major product C^T = op(B)^T op(A)^T: B is
// passed as cuBLASLt's "A" and A as its "B" (each with its own transpose flag unchanged),
// m = N, n = M, and the bias, which cuBLASLt broadcasts along D's column-major rows, lands on
// row-major C's columns: one value per output feature, as nn.Linear wants.
//
// Plans: the algorithm is chosen once per problem (shapes, leading dimensions, batch strides,
// dtypes, transposes, epilogue and pointer alignments) and kept, with the problem's cuBLASLt
// descriptors, for the life of the process, so steady-state training pays no heuristic query and
// builds no descriptor. How it is chosen is SetGemmAlgorithms' setting: cuBLASLt's heuristic's
// best, or the fastest of its best candidates timed on the first call's operands.
// Staging: a product cuBLASLt has no algorithm for as stated (f32 operands with an f16|bf16 C; a
// bias it cannot fuse; 16-bit matrices whose rows or batch matrices start only 2-byte aligned,
// e.g. odd leading dimensions) is computed into a 16-byte-aligned f32 copy of C, then with
// 16-byte-aligned copies of A and B if needed, and rounded once into C: the same numbers as a
// direct call, at the cost of the copies. Only a product that no staging lets cuBLASLt run
// aborts (XLMR_CHECK, naming its shape and alignments).
// All work is queued on CudaContext::Current().compute_stream() and uses the context's
// cuBLASLt handle and workspace. Asynchronous: results are ready when that stream reaches them.
#ifndef XLMR_KERNELS_CUDA_GEMM_H_
#define XLMR_KERNELS_CUDA_GEMM_H_

#include <cstdint>

#include "framework/tensor/tensor.h"
#include "kernels/cuda/matrix_layout.h"

namespace xlmr::kernels::cuda {

enum class Transpose { kNo, kYes };

// C = alpha * op(a) * op(b) + beta * c + bias, for matrices held in whole tensors.
//   [in] a, b: rank >= 2, contiguous, on Device::kCuda; all dimensions but the last are
//        flattened into rows (a [..., k] is a matrix of numel/k rows). Both f32, both f16 or both bf16.
//   [in] bias: [N] f32, f16 or bf16 added (in fp32) to every row of C, or an undefined Tensor for none.
//        A 16-bit bias with a C of its type is cuBLASLt's fused epilogue; with an f32 C it is widened.
//   [in,out] c: rank >= 2, [M, N] after flattening, f32, f16 or bf16. Read only when beta != 0
//        (beta = 1 accumulates, e.g. weight gradients summed over micro-steps); it must not
//        overlap a, b or bias.
// Aborts (XLMR_CHECK) on mismatched shapes or dtypes. An empty C is a no-op; K must be >= 1.
void Gemm(const Tensor& a, Transpose transpose_a, const Tensor& b, Transpose transpose_b,
          const Tensor& bias, float alpha, float beta, Tensor* c);

// For i in [0, batch_count): C_i = alpha * op(A_i) * op(B_i) + beta * C_i, in one cuBLASLt call.
//   [in] batch_count >= 1.
//   [in] a, b: tensors on Device::kCuda holding every A_i / B_i as `a_layout` / `b_layout`
//        describe (both f32, both f16 or both bf16); every addressed element must lie inside the tensor.
//   [in,out] c: f32, f16 or bf16 on Device::kCuda, holding every C_i as `c_layout` describes; the
//        C_i must not overlap each other (c_layout.batch_stride >= rows * ld) nor a or b.
// Shapes: op(A_i) is [M,K], op(B_i) is [K,N], C_i is [M,N] (M, N from c_layout).
// Numerics as for Gemm, for any leading dimensions and batch strides (see "Staging" above).
//
// Example, attention scores per (sequence, head), with q and k contiguous [B*H, S, D] and
// scores [B*H, S, S]:
//   const MatrixLayout qk{S, D, D, S * D}, sc{S, S, S, S * S};
//   GemmStridedBatched(B * H, q, qk, Transpose::kNo, k, qk, Transpose::kYes,
//                      1.0f / std::sqrt(D), 0.0f, &scores, sc);   // scores = q k^T / sqrt(D)
// and the context = probs * v as (probs, sc, kNo) x (v, qk, kNo) into [B*H, S, D].
// Heads interleaved in [B, S, H*D] are one batch per sequence (ld = H*D, batch_stride = D,
// batch_count = H, tensors offset to sequence b with Tensor::View): one call per b.
void GemmStridedBatched(int64_t batch_count, const Tensor& a, const MatrixLayout& a_layout,
                        Transpose transpose_a, const Tensor& b, const MatrixLayout& b_layout,
                        Transpose transpose_b, float alpha, float beta, Tensor* c,
                        const MatrixLayout& c_layout);

// As Gemm without a bias, and in the same cuBLASLt call (its BGRADB epilogue) the row sums of
// op(a): a_row_sums[m] = sum_k op(a)[m,k], summed in fp32 and written (not accumulated). That is
// a Linear's bias gradient from its weight-gradient product dweight = dy^T x (a = dy, kYes).
//   [in] a, b: f16 or bf16 (an f32 product has no such kernel: returns false), as for Gemm.
//   [in,out] c: f32. [out] a_row_sums: f32 CUDA [M], overlapping nothing else; 16-byte aligned
//        is what cuBLASLt's kernels want (a fresh tensor is).
// Returns false, having queued nothing, when cuBLASLt has no algorithm for the fused form (or
// under StageEveryGemmForTesting): the caller then runs Gemm and sums the rows itself.
bool GemmWithRowSumsOfA(const Tensor& a, Transpose transpose_a, const Tensor& b, Transpose transpose_b,
                        float alpha, float beta, Tensor* c, Tensor* a_row_sums);

// How a new problem's algorithm is chosen (process-wide; problems already planned keep theirs).
//   kHeuristic: cuBLASLt's heuristic's best. The same algorithm in every process on one GPU model
//     and cuBLASLt version, so two runs of a training give the same bits.
//   kMeasured: up to 8 of the heuristic's candidates, each run 1 + 3 times on the first call's
//     operands (C's own buffer when beta = 0, otherwise a scratch of C's size), and the fastest
//     kept. One host wait per new problem, the first step's only. Inside a CUDA graph capture
//     nothing can be timed: such a problem takes the heuristic's best. Timing noise can pick
//     another algorithm in another process, so two runs may differ in the last bits.
// Every candidate rounds once (split-K sums in fp32 only), so either choice meets this header's
// numerics.
enum class GemmAlgorithms { kHeuristic, kMeasured };
void SetGemmAlgorithms(GemmAlgorithms algorithms);
GemmAlgorithms CurrentGemmAlgorithms();

// The plans made so far: problems planned, those chosen by timing, candidates timed in all.
struct GemmPlanCounts {
  int64_t problems = 0;
  int64_t measured = 0;
  int64_t candidates_timed = 0;
};
GemmPlanCounts CountGemmPlans();

// Tests only: with `staged` true every later product takes the staging path with copies of
// A, B and C (what a cuBLASLt without an algorithm for its alignment makes it do), so the
// fallback is checked on any GPU. Not thread-safe against products in flight.
void StageEveryGemmForTesting(bool staged);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_GEMM_H_
