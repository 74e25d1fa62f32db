// cuBLASLt calls behind gemm.h. Host code only (no kernels of its own), so a plain .cc.
#include "kernels/cuda/gemm.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "framework/core/check.h"
#include "kernels/cuda/cast.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"

namespace xlmr::kernels::cuda {
namespace {

// ---- The problem in cuBLASLt's column-major terms ----

// A stored row-major matrix seen column-major: the same bytes are its transpose.
struct ColumnMajorView {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;
  int64_t batch_stride = 0;
};

ColumnMajorView ViewColumnMajor(const MatrixLayout& row_major) {
  return {row_major.cols, row_major.rows, row_major.ld, row_major.batch_stride};
}

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

bool HasVector(const Problem& p) { return p.epilogue != Problem::Epilogue::kNone; }

using ProblemKey = std::array<int64_t, 23>;

ProblemKey KeyOf(const Problem& p) {
  return {p.batch_count,       p.op_lt_a,           p.op_lt_b,   p.lt_a.rows, p.lt_a.cols,
          p.lt_a.ld,           p.lt_a.batch_stride, p.lt_b.rows, p.lt_b.cols, p.lt_b.ld,
          p.lt_b.batch_stride, p.lt_c.rows,         p.lt_c.cols, p.lt_c.ld,   p.lt_c.batch_stride,
          p.operand_type,      p.output_type,       static_cast<int64_t>(p.epilogue), p.align_a, p.align_b,
          p.align_c,           p.align_bias,        p.bias_type};
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

// ---- cuBLASLt descriptors, destroyed on scope exit ----

struct MatmulDescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* desc) const {
    CUBLAS_CHECK(cublasLtMatmulDescDestroy(desc));
  }
};
struct LayoutDeleter {
  void operator()(cublasLtMatrixLayoutOpaque_t* layout) const {
    CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(layout));
  }
};
struct PreferenceDeleter {
  void operator()(cublasLtMatmulPreferenceOpaque_t* preference) const {
    CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(preference));
  }
};
using MatmulDesc = std::unique_ptr<cublasLtMatmulDescOpaque_t, MatmulDescDeleter>;
using Layout = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutDeleter>;
using Preference = std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, PreferenceDeleter>;

template <typename T>
void SetDescAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute,
                      const T& value) {
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, attribute, &value, sizeof(value)))
      << "(matmul attribute " << static_cast<int>(attribute) << ")";
}

// fp32 accumulation and fp32 alpha/beta. CUBLAS_COMPUTE_32F (not _FAST_TF32) keeps f32 x f32
// products exact, like the CPU reference. The vector's pointer is set per call (SetVector).
MatmulDesc MakeMatmulDesc(const Problem& p) {
  cublasLtMatmulDesc_t desc = nullptr;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  MatmulDesc owned(desc);
  SetDescAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, p.op_lt_a);
  SetDescAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, p.op_lt_b);
  if (p.epilogue == Problem::Epilogue::kBias) {
    SetDescAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    // cuBLASLt documents the bias type of these kernels as the output type: an f16 bias for an
    // f16 output (autocast's fp16-rounded bias) or an f32 bias for an f32 output runs fused. An
    // f32 bias with an f16 output is asked for as such, and when no algorithm takes it Matmul
    // falls back to an f32 output (RunStaged). The epilogue adds the bias in fp32.
    SetDescAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, p.bias_type);
  }
  if (p.epilogue == Problem::Epilogue::kBiasGradient) {
    // The sums have the output's type (f32 here: GemmWithRowSumsOfA takes f32 outputs only).
    SetDescAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BGRADB);
    SetDescAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, p.bias_type);
  }
  return owned;
}

Layout MakeLayout(const ColumnMajorView& view, cudaDataType_t type, int64_t batch_count) {
  cublasLtMatrixLayout_t layout = nullptr;
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, type, static_cast<uint64_t>(view.rows),
                                          static_cast<uint64_t>(view.cols), view.ld));
  Layout owned(layout);
  if (batch_count > 1) {
    const int32_t count = static_cast<int32_t>(batch_count);
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                                  &count, sizeof(count)));
    CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout,
                                                  CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                  &view.batch_stride, sizeof(view.batch_stride)));
  }
  return owned;
}

struct Descriptors {
  MatmulDesc matmul;
  Layout a, b, c;  // cuBLASLt's A, B and C (= D: the product is written in place over C)
};

Descriptors MakeDescriptors(const Problem& p) {
  return {MakeMatmulDesc(p), MakeLayout(p.lt_a, p.operand_type, p.batch_count),
          MakeLayout(p.lt_b, p.operand_type, p.batch_count),
          MakeLayout(p.lt_c, p.output_type, p.batch_count)};
}

// ---- Algorithm choice, once per problem ----

// The most algorithms the heuristic is asked for under GemmAlgorithms::kMeasured.
constexpr int kCandidateCount = 8;
// Timed runs of each candidate, after one untimed run (its first launch may load the kernel).
constexpr int kTimedRuns = 3;

Preference MakePreference(const Problem& p) {
  cublasLtMatmulPreference_t preference = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  Preference owned(preference);
  const uint64_t workspace_bytes = CudaContext::kCublasLtWorkspaceBytes;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference,
                                                    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes, sizeof(workspace_bytes)));
  // Views inside flat parameter buffers need not be 256-byte aligned (the default assumption).
  const std::array<std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t>, 4> alignments = {{
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, static_cast<uint32_t>(p.align_a)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, static_cast<uint32_t>(p.align_b)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, static_cast<uint32_t>(p.align_c)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, static_cast<uint32_t>(p.align_c)},
  }};
  for (const auto& [attribute, bytes] : alignments) {
    CUBLAS_CHECK(
        cublasLtMatmulPreferenceSetAttribute(preference, attribute, &bytes, sizeof(bytes)));
  }
  // Split-K algorithms may add their partial products in the output type (INPLACE,
  // OUTPUT_TYPE), which rounds an f16 result more than once; allow only reductions in the fp32
  // compute type (and none), so every result is rounded once, as gemm.h promises.
  const uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
  CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reductions, sizeof(reductions)));
  return owned;
}

// The heuristic's algorithms for the problem, best first (at most `count`); empty with the
// reason in `*status` when it has none (NOT_SUPPORTED, or INVALID_VALUE for a combination of
// types and epilogue this cuBLASLt does not offer: both leave a fallback to the caller).
std::vector<cublasLtMatmulAlgo_t> QueryHeuristic(const Descriptors& d, const Preference& preference,
                                                 int count, cublasStatus_t* status) {
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(count));
  int found = 0;
  *status = cublasLtMatmulAlgoGetHeuristic(CudaContext::Current().cublaslt_handle(), d.matmul.get(),
                                           d.a.get(), d.b.get(), d.c.get(), d.c.get(),
                                           preference.get(), count, results.data(), &found);
  if (*status == CUBLAS_STATUS_NOT_SUPPORTED || *status == CUBLAS_STATUS_INVALID_VALUE) return {};
  CUBLAS_CHECK(*status) << "(cublasLtMatmulAlgoGetHeuristic)";
  std::vector<cublasLtMatmulAlgo_t> algorithms;
  for (int i = 0; i < found; ++i) {
    if (results[static_cast<size_t>(i)].state == CUBLAS_STATUS_SUCCESS) {
      algorithms.push_back(results[static_cast<size_t>(i)].algo);
    }
  }
  if (algorithms.empty()) *status = CUBLAS_STATUS_NOT_SUPPORTED;
  return algorithms;
}

std::atomic<GemmAlgorithms> g_algorithms{GemmAlgorithms::kHeuristic};

// Whether the compute stream is being captured into a CUDA graph (step_capture.h): nothing may
// wait for the device then, so no candidate can be timed.
bool ComputeStreamCapturing() {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  CUDA_CHECK(cudaStreamIsCapturing(CudaContext::Current().compute_stream(), &capture));
  return capture != cudaStreamCaptureStatusNone;
}

// One problem's descriptors (built once; only the vector's pointer changes between calls) and
// the algorithm chosen for it.
struct Plan {
  Descriptors descriptors;
  bool supported = false;
  cublasStatus_t heuristic_status = CUBLAS_STATUS_SUCCESS;  // why not, when unsupported
  cublasLtMatmulAlgo_t algorithm{};
};

cublasStatus_t Launch(const Plan& plan, const cublasLtMatmulAlgo_t& algorithm, const Pointers& ptr,
                      void* c, float alpha, float beta) {
  CudaContext& context = CudaContext::Current();
  const Descriptors& d = plan.descriptors;
  return cublasLtMatmul(context.cublaslt_handle(), d.matmul.get(), &alpha, ptr.lt_a, d.a.get(),
                        ptr.lt_b, d.b.get(), &beta, c, d.c.get(), c, d.c.get(), &algorithm,
                        context.cublaslt_workspace(), CudaContext::kCublasLtWorkspaceBytes,
                        context.compute_stream());
}

// The elements C's layout reaches in cuBLASLt's column-major terms (a timing scratch's size).
int64_t OutputExtent(const Problem& p) {
  return (p.batch_count - 1) * p.lt_c.batch_stride + (p.lt_c.cols - 1) * p.lt_c.ld + p.lt_c.rows;
}

// Milliseconds per run of `algorithm` on the call's operands, or +infinity when it fails to
// launch. The product goes to `c`: the caller's C when beta = 0 (its real run overwrites it
// afterwards), a scratch otherwise; a bias gradient goes to the caller's vector, which the real
// run also overwrites.
float TimeAlgorithm(const Plan& plan, const cublasLtMatmulAlgo_t& algorithm, const Pointers& ptr,
                    void* c, float alpha, float beta, cudaEvent_t start, cudaEvent_t stop) {
  if (Launch(plan, algorithm, ptr, c, alpha, beta) != CUBLAS_STATUS_SUCCESS) {
    return std::numeric_limits<float>::infinity();
  }
  cudaStream_t stream = CudaContext::Current().compute_stream();
  CUDA_CHECK(cudaEventRecord(start, stream));
  for (int run = 0; run < kTimedRuns; ++run) {
    CUBLAS_CHECK(Launch(plan, algorithm, ptr, c, alpha, beta)) << "(timing a GEMM candidate)";
  }
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float milliseconds = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start, stop));
  return milliseconds / kTimedRuns;
}

// The fastest of `candidates` on this call's operands (the first, the heuristic's best, wins
// ties). Waits for the device: never called while the stream is captured.
cublasLtMatmulAlgo_t FastestCandidate(const Problem& p, const Plan& plan,
                                      const std::vector<cublasLtMatmulAlgo_t>& candidates,
                                      const Pointers& ptr, float alpha, float beta) {
  Tensor scratch;
  void* c = ptr.c;
  if (beta != 0.0f) {
    const DType dtype = p.output_type == CUDA_R_32F ? DType::kF32
                        : p.output_type == CUDA_R_16F ? DType::kF16 : DType::kBF16;
    scratch = Tensor::Empty({OutputExtent(p)}, dtype, Device::kCuda, MemoryCategory::kWorkspace);
    c = scratch.raw_data();
  }
  cudaEvent_t start = nullptr, stop = nullptr;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  size_t fastest = 0;
  float fastest_ms = std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < candidates.size(); ++i) {
    const float ms = TimeAlgorithm(plan, candidates[i], ptr, c, alpha, beta, start, stop);
    if (ms < fastest_ms) fastest_ms = ms, fastest = i;
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return candidates[fastest];
}

// The process's plans (one CudaContext per process, so one cache). Never destroyed, like the
// context; the mutex makes it safe from any host thread, and covers setting a plan's vector
// pointer through to the launch that reads it.
class PlanCache {
 public:
  // Runs the problem when cuBLASLt has an algorithm for it (SUCCESS); otherwise does nothing
  // and returns the heuristic's status (why there is none).
  cublasStatus_t Run(const Problem& p, const Pointers& ptr, float alpha, float beta) {
    std::lock_guard<std::mutex> lock(mutex_);
    Plan& plan = Find(p, ptr, alpha, beta);
    if (!plan.supported) return plan.heuristic_status;
    SetVector(plan, p, ptr);
    CUBLAS_CHECK(Launch(plan, plan.algorithm, ptr, ptr.c, alpha, beta))
        << "(m=" << p.lt_c.rows << " n=" << p.lt_c.cols << " batch=" << p.batch_count << ")";
    return CUBLAS_STATUS_SUCCESS;
  }

  GemmPlanCounts Counts() {
    std::lock_guard<std::mutex> lock(mutex_);
    return counts_;
  }

 private:
  static void SetVector(Plan& plan, const Problem& p, const Pointers& ptr) {
    if (HasVector(p)) {
      SetDescAttribute(plan.descriptors.matmul.get(), CUBLASLT_MATMUL_DESC_BIAS_POINTER, ptr.bias);
    }
  }

  // The problem's plan, made on first sight: the heuristic's best, or under kMeasured the
  // fastest of its candidates timed on this call's operands (heuristic's best while captured).
  Plan& Find(const Problem& p, const Pointers& ptr, float alpha, float beta) {
    const ProblemKey key = KeyOf(p);
    auto found = plans_.find(key);
    if (found != plans_.end()) return *found->second;
    auto plan = std::make_unique<Plan>(Plan{MakeDescriptors(p)});
    // The heuristic reads the vector's pointer for its alignment (cublasLt.h): it is this call's,
    // and every later call of the problem has one as aligned (align_bias is part of the key).
    SetVector(*plan, p, ptr);
    const bool measure = g_algorithms.load() == GemmAlgorithms::kMeasured && !ComputeStreamCapturing();
    const std::vector<cublasLtMatmulAlgo_t> candidates = QueryHeuristic(
        plan->descriptors, MakePreference(p), measure ? kCandidateCount : 1, &plan->heuristic_status);
    plan->supported = !candidates.empty();
    if (plan->supported) {
      plan->algorithm = candidates.front();
      if (measure && candidates.size() > 1) {
        plan->algorithm = FastestCandidate(p, *plan, candidates, ptr, alpha, beta);
        ++counts_.measured;
        counts_.candidates_timed += static_cast<int64_t>(candidates.size());
      }
    }
    ++counts_.problems;
    return *plans_.emplace(key, std::move(plan)).first->second;
  }

  std::mutex mutex_;
  std::map<ProblemKey, std::unique_ptr<Plan>> plans_;
  GemmPlanCounts counts_;
};

PlanCache& Plans() {
  static PlanCache* const cache = new PlanCache;
  return *cache;
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
  return Plans().Run(p, ptr, g.alpha, g.beta);
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

void SetGemmAlgorithms(GemmAlgorithms algorithms) { g_algorithms = algorithms; }

GemmAlgorithms CurrentGemmAlgorithms() { return g_algorithms; }

GemmPlanCounts CountGemmPlans() { return Plans().Counts(); }

void StageEveryGemmForTesting(bool staged) { g_staged_for_testing = staged; }

}  // namespace xlmr::kernels::cuda
