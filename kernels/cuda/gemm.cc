// gemm.h's products: the callers' row-major arguments checked and stated as cuBLASLt problems
// (run through gemm_plans.h), and the staging of what cuBLASLt cannot take as stated. Host code
// only (no kernels of its own), so a plain .cc.
#include "kernels/cuda/gemm.h"

#include <cublasLt.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <utility>

#include "framework/core/check.h"
#include "kernels/cuda/cast.h"
#include "kernels/cuda/gemm_plans.h"

namespace xlmr::kernels::cuda {
namespace {

using gemm_plans::ColumnMajorView;
using gemm_plans::Pointers;
using gemm_plans::Problem;

// ---- The problem in cuBLASLt's column-major terms ----

ColumnMajorView ViewColumnMajor(const MatrixLayout& row_major) {
  return {row_major.cols, row_major.rows, row_major.ld, row_major.batch_stride};
}

// The largest power of two (up to 256) dividing `offset`.
int AlignmentOfOffset(uintptr_t offset) {
  int alignment = 1;
  while (alignment < 256 && offset % (2 * alignment) == 0) alignment *= 2;
  return alignment;
}

int AlignmentOf(const void* pointer) { return AlignmentOfOffset(reinterpret_cast<uintptr_t>(pointer)); }

// The alignment every matrix of a strided batch starts at: the first one's, limited by the
// batch stride in bytes (an odd stride of f16 matrices leaves every other matrix 2-byte aligned,
// and cuBLASLt's alignment preferences must hold for each of them).
int BatchAlignmentOf(const Tensor& t, const MatrixLayout& layout, int64_t batch_count) {
  const int first = AlignmentOf(t.raw_data());
  if (batch_count == 1) return first;
  const auto stride_bytes = static_cast<uintptr_t>(layout.batch_stride) * SizeOf(t.dtype());
  return stride_bytes == 0 ? first : std::min(first, AlignmentOfOffset(stride_bytes));
}

cudaDataType_t CudaTypeOf(DType dtype) {
  switch (dtype) {
    case DType::kF32: return CUDA_R_32F;
    case DType::kF16: return CUDA_R_16F;
    case DType::kBF16: return CUDA_R_16BF;
    default: break;
  }
  XLMR_CHECK(false) << "Gemm: dtype " << DTypeName(dtype) << " is not f32, f16 or bf16";
  return CUDA_R_32F;
}

// f16 or bf16: a 16-bit type that cuBLASLt reads and writes (with fp32 accumulation).
bool IsHalfType(cudaDataType_t type) { return type == CUDA_R_16F || type == CUDA_R_16BF; }

const char* TypeName(cudaDataType_t type) {
  return type == CUDA_R_16F ? "f16" : type == CUDA_R_16BF ? "bf16" : "f32";
}

// ---- Running ----

// Aborts naming the problem when cuBLASLt has no algorithm for it.
void CheckRan(cublasStatus_t status, const Problem& p) {
  const int64_t k = p.op_lt_a == CUBLAS_OP_N ? p.lt_a.cols : p.lt_a.rows;
  XLMR_CHECK(status == CUBLAS_STATUS_SUCCESS)
      << "Gemm: cuBLASLt has no algorithm for m=" << p.lt_c.rows << " n=" << p.lt_c.cols
      << " k=" << k << " batch=" << p.batch_count << " output "
      << TypeName(p.output_type) << " (alignments a " << p.align_b << ", b " << p.align_a
      << ", c " << p.align_c << " bytes): " << cublasLtGetStatusName(status);
}

// ---- Checks of the caller's arguments ----

MatrixLayout WholeTensorMatrix(const char* name, const Tensor& t) {
  XLMR_CHECK(t.defined() && t.rank() >= 2) << "Gemm: " << name << " must have rank >= 2, is "
                                           << (t.defined() ? ShapeString(t.shape()) : "undefined");
  const int64_t cols = t.dim(-1);
  return {cols == 0 ? 0 : t.numel() / cols, cols, std::max<int64_t>(cols, 1), 0};
}

void CheckOperand(const char* name, const Tensor& t, const MatrixLayout& layout,
                  int64_t batch_count) {
  XLMR_CHECK(t.defined() && t.device() == Device::kCuda)
      << "Gemm: " << name << " must be a CUDA tensor";
  XLMR_CHECK(IsFloating(t.dtype()))
      << "Gemm: " << name << " must be f32, f16 or bf16, is " << DTypeName(t.dtype());
  XLMR_CHECK(layout.rows >= 0 && layout.cols >= 0 &&
             layout.ld >= std::max<int64_t>(layout.cols, 1) && layout.batch_stride >= 0)
      << "Gemm: " << name << " layout rows " << layout.rows << " cols " << layout.cols << " ld "
      << layout.ld << " batch stride " << layout.batch_stride;
  if (layout.rows == 0 || layout.cols == 0) return;
  const int64_t last =
      (batch_count - 1) * layout.batch_stride + (layout.rows - 1) * layout.ld + layout.cols - 1;
  XLMR_CHECK(last < t.numel()) << "Gemm: " << name << " layout reaches element " << last
                               << " of a tensor of " << t.numel();
}

bool BytesOverlap(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.storage() != b.storage()) return false;
  return a.byte_offset() < b.byte_offset() + b.bytes() &&
         b.byte_offset() < a.byte_offset() + a.bytes();
}

// A product as the caller states it (row-major, the caller's A and B).
struct GemmArguments {
  int64_t batch_count;
  Tensor a;
  MatrixLayout a_layout;
  Transpose transpose_a;
  Tensor b;
  MatrixLayout b_layout;
  Transpose transpose_b;
  Tensor bias;  // undefined: none
  float alpha, beta;
  Tensor* c;
  MatrixLayout c_layout;
  Tensor* a_row_sums = nullptr;  // GemmWithRowSumsOfA's [M] output, or null
};

cublasOperation_t OperationOf(Transpose t) {
  return t == Transpose::kYes ? CUBLAS_OP_T : CUBLAS_OP_N;
}

// op(X)'s [rows, cols] for X stored as `layout`.
std::pair<int64_t, int64_t> OperatedShape(const MatrixLayout& layout, Transpose t) {
  return t == Transpose::kNo ? std::make_pair(layout.rows, layout.cols)
                             : std::make_pair(layout.cols, layout.rows);
}

void CheckArguments(const GemmArguments& g) {
  XLMR_CHECK(g.c != nullptr);
  XLMR_CHECK(g.batch_count >= 1 && g.batch_count <= std::numeric_limits<int32_t>::max())
      << "Gemm: batch count " << g.batch_count;
  CheckOperand("a", g.a, g.a_layout, g.batch_count);
  CheckOperand("b", g.b, g.b_layout, g.batch_count);
  CheckOperand("c", *g.c, g.c_layout, g.batch_count);
  XLMR_CHECK(g.a.dtype() == g.b.dtype()) << "Gemm: a is " << DTypeName(g.a.dtype()) << ", b is "
                                         << DTypeName(g.b.dtype()) << " (they must match)";
  const auto [m, k] = OperatedShape(g.a_layout, g.transpose_a);
  const auto [k_b, n] = OperatedShape(g.b_layout, g.transpose_b);
  XLMR_CHECK(k == k_b && m == g.c_layout.rows && n == g.c_layout.cols)
      << "Gemm: op(a) is [" << m << "," << k << "], op(b) [" << k_b << "," << n << "], c ["
      << g.c_layout.rows << "," << g.c_layout.cols << "]";
  XLMR_CHECK(g.batch_count == 1 || g.c_layout.batch_stride >= m * g.c_layout.ld)
      << "Gemm: the batch's C matrices overlap (batch stride " << g.c_layout.batch_stride << ")";
  XLMR_CHECK(!BytesOverlap(*g.c, g.a) && !BytesOverlap(*g.c, g.b) && !BytesOverlap(*g.c, g.bias))
      << "Gemm: c overlaps an input";
  if (g.bias.defined()) {
    XLMR_CHECK(g.bias.device() == Device::kCuda &&
               IsFloating(g.bias.dtype()) && g.bias.numel() == n)
        << "Gemm: bias must be f32, f16 or bf16 CUDA [" << n << "], is " << DTypeName(g.bias.dtype())
        << " " << ShapeString(g.bias.shape());
  }
}

Tensor NewWorkspace(int64_t elements, DType dtype) {
  return Tensor::Empty({elements}, dtype, Device::kCuda, MemoryCategory::kWorkspace);
}

// An f32 copy of a 16-bit bias (exact): the bias type cuBLASLt takes beside an f32 output.
Tensor WidenedBias(const Tensor& bias) {
  if (!bias.defined() || bias.dtype() == DType::kF32) return bias;
  Tensor widened = Tensor::Empty(bias.shape(), DType::kF32, Device::kCuda, MemoryCategory::kWorkspace);
  CastTensor(bias, &widened);
  return widened;
}

// The problem in cuBLASLt's terms. The bias goes as given: a 16-bit one only beside an output
// of its type (the type cuBLASLt documents for the bias; RunGemm widens it for an f32 output).
std::pair<Problem, Pointers> ProblemOf(const GemmArguments& g) {
  Problem p;
  p.batch_count = g.batch_count;
  p.op_lt_a = OperationOf(g.transpose_b);  // cuBLASLt's A is our B (see gemm.h)
  p.op_lt_b = OperationOf(g.transpose_a);
  p.lt_a = ViewColumnMajor(g.b_layout);
  p.lt_b = ViewColumnMajor(g.a_layout);
  p.lt_c = ViewColumnMajor(g.c_layout);
  p.operand_type = CudaTypeOf(g.a.dtype());
  p.output_type = CudaTypeOf(g.c->dtype());
  p.align_a = BatchAlignmentOf(g.b, g.b_layout, g.batch_count);
  p.align_b = BatchAlignmentOf(g.a, g.a_layout, g.batch_count);
  p.align_c = BatchAlignmentOf(*g.c, g.c_layout, g.batch_count);
  Pointers ptr{g.b.raw_data(), g.a.raw_data(), g.c->raw_data(), nullptr};
  const Tensor* vector = nullptr;
  if (g.bias.defined()) {
    p.epilogue = Problem::Epilogue::kBias;
    vector = &g.bias;
  } else if (g.a_row_sums != nullptr) {
    p.epilogue = Problem::Epilogue::kBiasGradient;
    vector = g.a_row_sums;
  }
  if (vector != nullptr) {
    p.bias_type = CudaTypeOf(vector->dtype());
    p.align_bias = AlignmentOf(vector->raw_data());
    ptr.bias = const_cast<void*>(vector->raw_data());  // written only by kBiasGradient
  }
  return {p, ptr};
}

// Runs the product as stated when cuBLASLt has an algorithm for it (SUCCESS); otherwise does
// nothing and returns why not. cuBLASLt offers no f32 x f32 -> f16|bf16 matmul: that one is
// NOT_SUPPORTED without asking. `problem` (may be null) receives the problem, for messages.
cublasStatus_t TryDirect(const GemmArguments& g, Problem* problem = nullptr) {
  const auto [p, ptr] = ProblemOf(g);
  if (problem != nullptr) *problem = p;
  if (p.operand_type == CUDA_R_32F && IsHalfType(p.output_type)) return CUBLAS_STATUS_NOT_SUPPORTED;
  return gemm_plans::Run(p, ptr, g.alpha, g.beta);
}

// ---- Staged products: what cuBLASLt cannot take directly ----
//
// Two things can leave cuBLASLt without an algorithm: the output (an f16|bf16 C from f32
// operands, or a bias it cannot fuse beside an f16|bf16 C) and the alignment (16-bit matrices
// with odd leading dimensions or batch strides start 2-byte aligned, e.g. eager attention's
// [S, S] score matrices for odd S; cuBLASLt's tensor-core kernels want 16 bytes). Staging
// computes into an f32 copy of C whose rows and matrices start 16-byte aligned, with an f32
// bias, and rounds it once into C's layout (CastMatrices), which gives the numbers of a direct
// f16|bf16 output (one rounding of the fp32 result) and leaves C's padding untouched. When that
// still finds no algorithm, the operands too are copied into 16-byte-aligned layouts (the same
// values). Only then does a product abort, naming its shape and alignments.

// `layout` with each row padded to a multiple of 16 bytes and the matrices packed one after
// the other (a broadcast matrix, stride 0, stays one matrix).
MatrixLayout AlignedLayout(const MatrixLayout& layout, DType dtype) {
  const int64_t per_16_bytes = 16 / SizeOf(dtype);
  const int64_t ld = std::max<int64_t>((layout.cols + per_16_bytes - 1) / per_16_bytes, 1) * per_16_bytes;
  return {layout.rows, layout.cols, ld, layout.batch_stride == 0 ? 0 : layout.rows * ld};
}

// The matrices of `t` (laid out as `*layout`) copied into a new 16-byte-aligned buffer of
// `dtype`; `*layout` becomes the copy's.
Tensor AlignedCopy(int64_t batch_count, const Tensor& t, MatrixLayout* layout, DType dtype) {
  const MatrixLayout aligned = AlignedLayout(*layout, dtype);
  const int64_t matrices = aligned.batch_stride == 0 ? 1 : batch_count;
  Tensor copy = NewWorkspace(std::max<int64_t>(matrices * aligned.rows * aligned.ld, 1), dtype);
  CastMatrices(matrices, t, *layout, &copy, aligned);
  *layout = aligned;
  return copy;
}

// StageEveryGemmForTesting (gemm.h): skip the direct call and the C-only stage.
std::atomic<bool> g_staged_for_testing{false};

void RunStaged(const GemmArguments& g) {
  GemmArguments staged = g;
  staged.c_layout = AlignedLayout(g.c_layout, DType::kF32);
  Tensor c_f32 = NewWorkspace(g.batch_count * staged.c_layout.rows * staged.c_layout.ld, DType::kF32);
  // With beta = 0 cuBLASLt does not read C: the copy in is needed only to accumulate.
  if (g.beta != 0.0f) CastMatrices(g.batch_count, *g.c, g.c_layout, &c_f32, staged.c_layout);
  staged.c = &c_f32;
  staged.bias = WidenedBias(g.bias);
  if (staged.bias.defined() && AlignmentOf(staged.bias.raw_data()) < 16) {
    MatrixLayout row{1, staged.bias.numel(), staged.bias.numel(), 0};
    staged.bias = AlignedCopy(1, staged.bias, &row, DType::kF32).View(0, {row.cols});
  }
  Problem problem;
  cublasStatus_t status = g_staged_for_testing ? CUBLAS_STATUS_NOT_SUPPORTED : TryDirect(staged, &problem);
  if (status != CUBLAS_STATUS_SUCCESS) {
    staged.a = AlignedCopy(g.batch_count, g.a, &staged.a_layout, g.a.dtype());
    staged.b = AlignedCopy(g.batch_count, g.b, &staged.b_layout, g.b.dtype());
    status = TryDirect(staged, &problem);
  }
  CheckRan(status, problem);
  CastMatrices(g.batch_count, c_f32, staged.c_layout, g.c, g.c_layout);
}

void RunGemm(GemmArguments g) {
  CheckArguments(g);
  const int64_t k = OperatedShape(g.a_layout, g.transpose_a).second;
  if (g.c_layout.rows == 0 || g.c_layout.cols == 0) return;
  XLMR_CHECK(k > 0) << "Gemm: K must be >= 1";
  // Once, before either path: an f32 output takes an f32 bias (the staged path's output is f32).
  if (g.c->dtype() == DType::kF32) g.bias = WidenedBias(g.bias);
  if (!g_staged_for_testing && TryDirect(g) == CUBLAS_STATUS_SUCCESS) return;
  RunStaged(g);
}

}  // namespace

void Gemm(const Tensor& a, Transpose transpose_a, const Tensor& b, Transpose transpose_b,
          const Tensor& bias, float alpha, float beta, Tensor* c) {
  XLMR_CHECK(c != nullptr);
  RunGemm({1, a, WholeTensorMatrix("a", a), transpose_a, b, WholeTensorMatrix("b", b), transpose_b,
           bias, alpha, beta, c, WholeTensorMatrix("c", *c)});
}

void GemmStridedBatched(int64_t batch_count, const Tensor& a, const MatrixLayout& a_layout,
                        Transpose transpose_a, const Tensor& b, const MatrixLayout& b_layout,
                        Transpose transpose_b, float alpha, float beta, Tensor* c,
                        const MatrixLayout& c_layout) {
  RunGemm({batch_count, a, a_layout, transpose_a, b, b_layout, transpose_b, Tensor(), alpha, beta,
           c, c_layout});
}

bool GemmWithRowSumsOfA(const Tensor& a, Transpose transpose_a, const Tensor& b, Transpose transpose_b,
                        float alpha, float beta, Tensor* c, Tensor* a_row_sums) {
  XLMR_CHECK(c != nullptr && a_row_sums != nullptr);
  GemmArguments g{1, a, WholeTensorMatrix("a", a), transpose_a, b, WholeTensorMatrix("b", b), transpose_b,
                  Tensor(), alpha, beta, c, WholeTensorMatrix("c", *c), a_row_sums};
  CheckArguments(g);
  const auto [m, k] = OperatedShape(g.a_layout, transpose_a);
  XLMR_CHECK(c->dtype() == DType::kF32 && a_row_sums->device() == Device::kCuda &&
             a_row_sums->dtype() == DType::kF32 && a_row_sums->numel() == m &&
             !BytesOverlap(*a_row_sums, *c) && !BytesOverlap(*a_row_sums, a) && !BytesOverlap(*a_row_sums, b))
      << "GemmWithRowSumsOfA: c must be f32 and a_row_sums an f32 CUDA [" << m
      << "] apart from the operands, is " << DTypeName(a_row_sums->dtype()) << " "
      << ShapeString(a_row_sums->shape());
  XLMR_CHECK(m > 0 && g.c_layout.cols > 0 && k > 0) << "GemmWithRowSumsOfA: empty product";
  if (g_staged_for_testing || a.dtype() == DType::kF32) return false;
  return TryDirect(g) == CUBLAS_STATUS_SUCCESS;
}

void StageEveryGemmForTesting(bool staged) { g_staged_for_testing = staged; }

}  // namespace xlmr::kernels::cuda
