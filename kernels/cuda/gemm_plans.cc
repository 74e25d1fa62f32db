// gemm_plans.h: cuBLASLt descriptors and algorithm choice, once per problem. Host code only.
#include "kernels/cuda/gemm_plans.h"

#include <cuda_runtime_api.h>

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
#include "framework/tensor/tensor.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"
#include "kernels/cuda/gemm.h"

namespace xlmr::kernels::cuda {
namespace gemm_plans {
namespace {

bool HasVector(const Problem& p) { return p.epilogue != Problem::Epilogue::kNone; }

using ProblemKey = std::array<int64_t, 23>;

ProblemKey KeyOf(const Problem& p) {
  return {p.batch_count,       p.op_lt_a,           p.op_lt_b,   p.lt_a.rows, p.lt_a.cols,
          p.lt_a.ld,           p.lt_a.batch_stride, p.lt_b.rows, p.lt_b.cols, p.lt_b.ld,
          p.lt_b.batch_stride, p.lt_c.rows,         p.lt_c.cols, p.lt_c.ld,   p.lt_c.batch_stride,
          p.operand_type,      p.output_type,       static_cast<int64_t>(p.epilogue), p.align_a, p.align_b,
          p.align_c,           p.align_bias,        p.bias_type};
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

}  // namespace

cublasStatus_t Run(const Problem& p, const Pointers& ptr, float alpha, float beta) {
  return Plans().Run(p, ptr, alpha, beta);
}

}  // namespace gemm_plans

void SetGemmAlgorithms(GemmAlgorithms algorithms) { gemm_plans::g_algorithms = algorithms; }

GemmAlgorithms CurrentGemmAlgorithms() { return gemm_plans::g_algorithms; }

GemmPlanCounts CountGemmPlans() { return gemm_plans::Plans().Counts(); }

}  // namespace xlmr::kernels::cuda
