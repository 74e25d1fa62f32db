// The plans behind gemm.h (internal to kernels/cuda's gemm library): a product stated in
// cuBLASLt's column-major terms (Problem), and running it with the algorithm chosen for it once
// per problem, kept with its descriptors for the life of the process (gemm_plans.cc: the
// heuristic's best, or under GemmAlgorithms::kMeasured the fastest of its candidates).
// gemm.cc maps the callers' row-major arguments to Problems and stages what cuBLASLt cannot take.
#ifndef XLMR_KERNELS_CUDA_GEMM_PLANS_H_
#define XLMR_KERNELS_CUDA_GEMM_PLANS_H_

#include <cublasLt.h>

#include <cstdint>

namespace xlmr::kernels::cuda::gemm_plans {

// A stored row-major matrix seen column-major: the same bytes are its transpose.
struct ColumnMajorView {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;
  int64_t batch_stride = 0;
};

// Everything cuBLASLt's choice of algorithm depends on. Its "A" is the caller's B and its "B"
// the caller's A (gemm.h explains the swap).
struct Problem {
  int64_t batch_count = 1;
  cublasOperation_t op_lt_a = CUBLAS_OP_N;
  cublasOperation_t op_lt_b = CUBLAS_OP_N;
  ColumnMajorView lt_a, lt_b, lt_c;
  cudaDataType_t operand_type = CUDA_R_32F;
  cudaDataType_t output_type = CUDA_R_32F;
  // kBias adds a bias vector; kBiasGradient writes op(A)'s row sums (cuBLASLt's BGRADB, in its
  // column-major terms: the sums of its "B" over k).
  enum class Epilogue { kNone, kBias, kBiasGradient } epilogue = Epilogue::kNone;
  cudaDataType_t bias_type = CUDA_R_32F;  // f16|bf16 only beside an output of that type (RunGemm)
  // Pointer alignments in bytes (up to 256): algorithms needing more are excluded.
  int align_a = 0, align_b = 0, align_c = 0, align_bias = 0;
};

struct Pointers {
  const void* lt_a = nullptr;
  const void* lt_b = nullptr;
  void* c = nullptr;
  void* bias = nullptr;  // the bias read (kBias) or the row sums written (kBiasGradient)
};


// Runs the problem when cuBLASLt has an algorithm for it (SUCCESS); otherwise does nothing and
// returns the heuristic's status (why there is none). A new problem is planned here, on this
// call's operands (they are timed under kMeasured unless the compute stream is being captured).
cublasStatus_t Run(const Problem& p, const Pointers& ptr, float alpha, float beta);

}  // namespace xlmr::kernels::cuda::gemm_plans

#endif  // XLMR_KERNELS_CUDA_GEMM_PLANS_H_
