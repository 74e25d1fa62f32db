// gemm_bench: the CPU GEMM libraries at the model's own matrix products (issue 41 item 1).
//
// What it measures: GFLOP/s (2*m*n*k*batch / time, the median of --repeats timed calls after
// --warmup untimed ones) of row-major fp32 products, with no environment variable choosing a
// kernel (bench/gemm_bench.sh unsets those that would), for
//   - every Linear of the base (hidden 768) and large (1024) encoders, as kernels/cpu/linear.cc
//     issues them for T tokens: forward y = x w^T (NoTrans, Trans), input gradient dx = dy w
//     (NoTrans, NoTrans), weight gradient dw += dy^T x (Trans, NoTrans, beta 1);
//   - attention's per-head products (kernels/cpu/attention.cc): scores = q_h k_h^T [L, 64] x
//     [64, L] and context = p v_h [L, L] x [L, 64], q/k/v heads strided by the hidden size,
//     batch * heads of them (the forward's two; the backward's four have the same sizes, two of
//     them with A transposed);
//   - one large square product, for the machine's peak.
// Why: the product's step spends most of its time in OpenBLAS's sgemm, and Debian's OpenBLAS
// falls back to generic kernels on CPUs it does not recognise; this table decides which library
// (or which per shape) the CPU backend should call.
//
// Libraries, one small function each (Run* below):
//   openblas_pool    the product's call: kernels/cpu/gemm.cc's Sgemm (single-threaded OpenBLAS
//                    calls on blocks of rows, over the backend's own pool; attention: one call
//                    per head, heads over the pool, as attention.cc)
//   openblas_threads one cblas_sgemm with OpenBLAS's own threads
//   dnnl_sgemm       oneDNN's BLAS-like dnnl_sgemm (row-major), OpenMP threads
//   dnnl_matmul      oneDNN's matmul primitive on the strided operands (created once per shape,
//                    not timed)
//   dnnl_matmul_packed  the same with B in oneDNN's preferred layout (format_tag::any), reordered
//                    once untimed: only where B is a weight (forward, input gradient, square)
//   blis             bli_sgemm (BLIS's typed API; BLIS is dlopen'ed, see blis_gemm.h)
// Each library's result is compared with openblas_pool's (max |c - ref| / max |ref|); the worst
// is shown, and a value above --tolerance marks the row "FAILED: <library>" and the exit status
// is 1.
//
// Threads: the backend's pool has OPENBLAS_NUM_THREADS threads (read when it loads), and every
// library is given the same count. Run it once per thread count:
//   bazel build -c opt //bench:gemm_bench
//   OPENBLAS_NUM_THREADS=2 bazel-bin/bench/gemm_bench
//   OPENBLAS_NUM_THREADS=1 bazel-bin/bench/gemm_bench
// bench/gemm_bench.sh runs both and PyTorch's reference (bench/torch_gemm_bench.py).
#include <cblas.h>
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "bench/blis_gemm.h"
#include "dnnl.h"
#include "dnnl.hpp"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/parallel.h"

ABSL_FLAG(bool, quick, false, "tiny shapes, few repeats: a smoke test, not a measurement");
ABSL_FLAG(int, repeats, 10, "timed calls per library and shape (median reported)");
ABSL_FLAG(int, warmup, 2, "untimed calls first");
ABSL_FLAG(double, tolerance, 1e-4, "largest max|c - ref| / max|ref| that passes");
ABSL_FLAG(int, settle_ms, 300,
          "pause before each library, so that the previous one's idle threads stop polling "
          "(OpenBLAS's poll for up to ~0.1 s); 0 with --quick");
ABSL_FLAG(std::string, cases, "",
          "comma-separated substrings: run only the cases whose name contains one (empty: all)");

namespace xlmr::bench {
namespace {

using Clock = std::chrono::steady_clock;

// One product shape: C[m, n] = op(A) op(B) + beta C, row-major with the leading dimensions
// given, once per entry of offset_* (attention's heads: product i reads A at offset_a[i] floats,
// and so on; a Linear is one product at offset 0).
struct Case {
  std::string name;
  bool trans_a, trans_b;
  int64_t m, n, k;
  int64_t lda, ldb, ldc;
  float beta;
  std::vector<int64_t> offset_a = {0}, offset_b = {0}, offset_c = {0};

  int64_t batch() const { return static_cast<int64_t>(offset_a.size()); }
  double Flops() const { return 2.0 * m * n * k * batch(); }
  static int64_t Size(const std::vector<int64_t>& offsets, int64_t rows, int64_t ld) {
    return *std::max_element(offsets.begin(), offsets.end()) + rows * ld;
  }
  int64_t SizeA() const { return Size(offset_a, trans_a ? k : m, lda); }
  int64_t SizeB() const { return Size(offset_b, trans_b ? n : k, ldb); }
  int64_t SizeC() const { return Size(offset_c, m, ldc); }
};

// The three products of one Linear(in -> out) over `tokens` rows, as kernels/cpu/linear.cc.
void AddLinear(const std::string& prefix, int64_t tokens, int64_t in, int64_t out,
               std::vector<Case>* cases) {
  const std::string shape = prefix + " " + std::to_string(in) + "->" + std::to_string(out) +
                            " T=" + std::to_string(tokens);
  // y[T, out] = x[T, in] w[out, in]^T
  cases->push_back({shape + " fwd", false, true, tokens, out, in, in, in, out, 0.0f});
  // dx[T, in] = dy[T, out] w[out, in]
  cases->push_back({shape + " dgrad", false, false, tokens, in, out, out, in, in, 0.0f});
  // dw[out, in] += dy[T, out]^T x[T, in]
  cases->push_back({shape + " wgrad", true, false, out, in, tokens, out, in, in, 1.0f});
}

// Attention's forward products (kernels/cpu/attention.cc) for `batch` sequences of `seq` tokens:
// q, k, v, context are [batch, seq, hidden], head h of sequence b the `head_dim` columns at
// b*seq*hidden + h*head_dim (leading dimension hidden); scores and probabilities are one
// contiguous [seq, seq] block per head.
void AddAttention(int64_t batch, int64_t seq, int64_t hidden, int64_t head_dim,
                  std::vector<Case>* cases) {
  const int64_t heads = hidden / head_dim;
  std::vector<int64_t> head_offsets, block_offsets;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      head_offsets.push_back(b * seq * hidden + h * head_dim);
      block_offsets.push_back((b * heads + h) * seq * seq);
    }
  }
  const std::string shape =
      "attn L=" + std::to_string(seq) + " x" + std::to_string(batch * heads) + " heads";
  // scores_h[L, L] = q_h[L, d] k_h[L, d]^T
  cases->push_back({shape + " q k^T", false, true, seq, seq, head_dim, hidden, hidden, seq, 0.0f,
                    head_offsets, head_offsets, block_offsets});
  // context_h[L, d] = p_h[L, L] v_h[L, d]
  cases->push_back({shape + " p v", false, false, seq, head_dim, seq, seq, hidden, hidden, 0.0f,
                    block_offsets, head_offsets, head_offsets});
}

std::vector<Case> Cases(bool quick) {
  std::vector<Case> cases;
  if (quick) {
    AddLinear("tiny", 96, 64, 256, &cases);
    AddLinear("tiny", 96, 256, 64, &cases);
    AddAttention(2, 32, 64, 16, &cases);
    cases.push_back({"square 256", false, false, 256, 256, 256, 256, 256, 256, 0.0f});
    return cases;
  }
  for (const int64_t tokens : {1024, 4096}) {
    for (const auto& [prefix, hidden] : {std::pair<const char*, int64_t>{"base", 768},
                                         std::pair<const char*, int64_t>{"large", 1024}}) {
      AddLinear(prefix, tokens, hidden, hidden, &cases);
      AddLinear(prefix, tokens, hidden, 4 * hidden, &cases);
      AddLinear(prefix, tokens, 4 * hidden, hidden, &cases);
    }
  }
  // 1024 tokens: 8 sequences of 128, 2 of 512; base heads (12 x 64).
  AddAttention(8, 128, 768, 64, &cases);
  AddAttention(2, 512, 768, 64, &cases);
  cases.push_back({"square 4096", false, false, 4096, 4096, 4096, 4096, 4096, 4096, 0.0f});
  return cases;
}

// ---- One function per library: runs every product of the case once. ----

void RunOpenblasPool(const Case& c, const float* a, const float* b, float* out) {
  const CBLAS_TRANSPOSE ta = c.trans_a ? CblasTrans : CblasNoTrans;
  const CBLAS_TRANSPOSE tb = c.trans_b ? CblasTrans : CblasNoTrans;
  if (c.batch() == 1) {
    kernels::cpu::Sgemm(ta, tb, c.m, c.n, c.k, 1.0f, a, c.lda, b, c.ldb, c.beta, out, c.ldc);
    return;
  }
  kernels::cpu::ParallelFor(c.batch(), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      cblas_sgemm(CblasRowMajor, ta, tb, c.m, c.n, c.k, 1.0f, a + c.offset_a[i], c.lda,
                  b + c.offset_b[i], c.ldb, c.beta, out + c.offset_c[i], c.ldc);
    }
  });
}

void RunOpenblasThreads(const Case& c, const float* a, const float* b, float* out) {
  for (int64_t i = 0; i < c.batch(); ++i) {
    cblas_sgemm(CblasRowMajor, c.trans_a ? CblasTrans : CblasNoTrans,
                c.trans_b ? CblasTrans : CblasNoTrans, c.m, c.n, c.k, 1.0f, a + c.offset_a[i],
                c.lda, b + c.offset_b[i], c.ldb, c.beta, out + c.offset_c[i], c.ldc);
  }
}

void RunDnnlSgemm(const Case& c, const float* a, const float* b, float* out) {
  for (int64_t i = 0; i < c.batch(); ++i) {
    dnnl_sgemm(c.trans_a ? 'T' : 'N', c.trans_b ? 'T' : 'N', c.m, c.n, c.k, 1.0f,
               a + c.offset_a[i], c.lda, b + c.offset_b[i], c.ldb, c.beta,
               out + c.offset_c[i], c.ldc);
  }
}

// oneDNN's matmul primitive for one case: op(A) and op(B) described by strides (a transposed
// operand is the same memory read column-major), beta 1 as a sum post-op. Built once, not timed.
// With pack_weights, B's layout is oneDNN's choice (format_tag::any) and PackWeights reorders B
// into it once, untimed: the rate of a product whose weight is packed once per optimizer step
// (forward and input gradient: B is the weight).
class DnnlMatmul {
 public:
  DnnlMatmul(const Case& c, bool pack_weights)
      : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
    using dims = dnnl::memory::dims;
    const auto f32 = dnnl::memory::data_type::f32;
    const dnnl::memory::desc a_md(dims{c.m, c.k}, f32,
                                  c.trans_a ? dims{1, c.lda} : dims{c.lda, 1});
    user_b_md_ = dnnl::memory::desc(dims{c.k, c.n}, f32,
                                    c.trans_b ? dims{1, c.ldb} : dims{c.ldb, 1});
    const dnnl::memory::desc b_md =
        pack_weights ? dnnl::memory::desc(dims{c.k, c.n}, f32, dnnl::memory::format_tag::any)
                     : user_b_md_;
    const dnnl::memory::desc c_md(dims{c.m, c.n}, f32, dims{c.ldc, 1});
    dnnl::primitive_attr attr;
    if (c.beta != 0.0f) {
      dnnl::post_ops ops;
      ops.append_sum(c.beta);
      attr.set_post_ops(ops);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), attr, engine_);
    implementation_ = pd.impl_info_str();
    packed_ = pack_weights;
    matmul_ = dnnl::matmul(pd);
    a_ = dnnl::memory(a_md, engine_, nullptr);
    b_ = dnnl::memory(pd.weights_desc(), engine_, pack_weights ? DNNL_MEMORY_ALLOCATE : nullptr);
    c_ = dnnl::memory(c_md, engine_, nullptr);
  }

  // B reordered into the primitive's layout (once, before the timed calls; with pack_weights).
  void PackWeights(const float* b) {
    dnnl::memory user(user_b_md_, engine_, const_cast<float*>(b));
    dnnl::reorder(user, b_).execute(stream_, user, b_);
    stream_.wait();
  }

  void Run(const Case& c, const float* a, const float* b, float* out) {
    for (int64_t i = 0; i < c.batch(); ++i) {
      a_.set_data_handle(const_cast<float*>(a + c.offset_a[i]));
      if (!packed_) b_.set_data_handle(const_cast<float*>(b + c.offset_b[i]));
      c_.set_data_handle(out + c.offset_c[i]);
      matmul_.execute(stream_, {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}});
    }
    stream_.wait();
  }

  const std::string& implementation() const { return implementation_; }

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::matmul matmul_;
  dnnl::memory::desc user_b_md_;
  dnnl::memory a_, b_, c_;
  bool packed_ = false;
  std::string implementation_;
};

void RunBlis(const Case& c, const float* a, const float* b, float* out) {
  for (int64_t i = 0; i < c.batch(); ++i) {
    BlisSgemm(c.trans_a, c.trans_b, c.m, c.n, c.k, 1.0f, a + c.offset_a[i], c.lda,
              b + c.offset_b[i], c.ldb, c.beta, out + c.offset_c[i], c.ldc);
  }
}

// ---- Timing, checking, reporting. ----

using RunFn = std::function<void(const float* a, const float* b, float* out)>;


double MaxRelativeError(const std::vector<float>& got, const std::vector<float>& ref) {
  double max_diff = 0.0, max_ref = 0.0;
  for (size_t i = 0; i < ref.size(); ++i) {
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(got[i]) - ref[i]));
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(ref[i])));
  }
  return max_ref > 0.0 ? max_diff / max_ref : max_diff;
}

// GFLOP/s of `run`: one checked call from C0 (its output returned in *checked), then warm-up
// calls and timed calls (median).
double Measure(const Case& c, const RunFn& run, const std::vector<float>& a,
               const std::vector<float>& b, const std::vector<float>& c0,
               std::vector<float>* checked, int warmup, int repeats) {
  // The previous library's idle threads poll for a while before they sleep (OpenBLAS's for up to
  // ~0.1 s, OpenMP's briefly): let them, so that they do not take this library's cores.
  std::this_thread::sleep_for(std::chrono::milliseconds(absl::GetFlag(FLAGS_settle_ms)));
  *checked = c0;
  run(a.data(), b.data(), checked->data());
  std::vector<float> out = c0;
  for (int i = 0; i < warmup; ++i) run(a.data(), b.data(), out.data());
  std::vector<double> seconds;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    run(a.data(), b.data(), out.data());
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
  return c.Flops() / seconds[seconds.size() / 2] / 1e9;
}

std::vector<float> Random(int64_t size, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(size));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& x : v) x = uniform(rng);
  return v;
}

std::string LibraryOf(const void* function) {
  Dl_info info{};
  return dladdr(function, &info) != 0 && info.dli_fname != nullptr ? info.dli_fname : "?";
}

std::string DnnlIsa() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "all (no JIT limit)";
  }
}

bool Selected(const std::string& name, const std::string& filter) {
  if (filter.empty()) return true;
  size_t begin = 0;
  while (begin <= filter.size()) {
    const size_t end = std::min(filter.find(',', begin), filter.size());
    if (end > begin && name.find(filter.substr(begin, end - begin)) != std::string::npos) return true;
    begin = end + 1;
  }
  return false;
}

int Main(bool quick, int warmup, int repeats, double tolerance, const std::string& filter) {
  const int threads = kernels::cpu::CpuThreadCount();  // OPENBLAS_NUM_THREADS, read at load
  std::string error;
  if (!LoadBlis(&error)) {
    std::fprintf(stderr, "gemm_bench: %s\n", error.c_str());
    return 2;
  }
  // The same thread count for every library. OpenBLAS stays at 1 except in openblas_threads.
  omp_set_num_threads(threads);
  BlisSetThreads(threads);
  const dnnl_version_t* dnnl = dnnl_version();

  std::printf("threads: %d%s\n\n", threads, quick ? " (--quick: tiny shapes, not a measurement)" : "");
  std::printf("- OpenBLAS: %s; core %s; cblas_sgemm from %s\n", openblas_get_config(),
              openblas_get_corename(), LibraryOf(reinterpret_cast<void*>(&cblas_sgemm)).c_str());
  std::printf("- oneDNN %d.%d.%d: ISA %s; dnnl_sgemm from %s\n", dnnl->major, dnnl->minor,
              dnnl->patch, DnnlIsa().c_str(),
              LibraryOf(reinterpret_cast<void*>(&dnnl_sgemm)).c_str());
  std::printf("- %s\n\n", BlisDescription().c_str());
  std::printf("GFLOP/s (median of %d after %d warm-up); max rel err: the worst library's "
              "max|c - c_openblas_pool| / max|c_openblas_pool|\n\n",
              repeats, warmup);
  std::printf("| case | m | n | k | batch | openblas_pool | openblas_threads | dnnl_sgemm | "
              "dnnl_matmul | dnnl_matmul_packed | blis | max rel err | dnnl_matmul impl (packed) |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");

  bool all_pass = true;
  uint32_t seed = 1;
  for (const Case& c : Cases(quick)) {
    if (!Selected(c.name, filter)) continue;
    const std::vector<float> a = Random(c.SizeA(), seed++), b = Random(c.SizeB(), seed++);
    const std::vector<float> c0 = Random(c.SizeC(), seed++);
    DnnlMatmul matmul(c, /*pack_weights=*/false);
    // Packed weights only where B is a weight: one product (no heads), B not the activations.
    const bool weight_b = c.batch() == 1 && c.name.find("wgrad") == std::string::npos;
    std::optional<DnnlMatmul> packed;
    if (weight_b) {
      packed.emplace(c, /*pack_weights=*/true);
      packed->PackWeights(b.data());
    }
    const std::vector<std::pair<const char*, RunFn>> libraries = {
        {"openblas_pool", [&](auto a, auto b, auto o) { RunOpenblasPool(c, a, b, o); }},
        {"openblas_threads",
         [&](auto a, auto b, auto o) {
           openblas_set_num_threads(threads);
           RunOpenblasThreads(c, a, b, o);
           openblas_set_num_threads(1);
         }},
        {"dnnl_sgemm", [&](auto a, auto b, auto o) { RunDnnlSgemm(c, a, b, o); }},
        {"dnnl_matmul", [&](auto a, auto b, auto o) { matmul.Run(c, a, b, o); }},
        {"dnnl_matmul_packed",
         [&](auto a, auto b, auto o) { packed.has_value() ? packed->Run(c, a, b, o) : void(); }},
        {"blis", [&](auto a, auto b, auto o) { RunBlis(c, a, b, o); }},
    };
    std::vector<float> reference, checked;
    std::string row;
    double worst = 0.0;
    std::string worst_library;
    for (const auto& [name, run] : libraries) {
      if (std::string(name) == "dnnl_matmul_packed" && !packed.has_value()) {
        row += " - |";
        continue;
      }
      const double gflops = Measure(c, run, a, b, c0, reference.empty() ? &reference : &checked,
                               warmup, repeats);
      const double err = checked.empty() ? 0.0 : MaxRelativeError(checked, reference);
      if (err > worst) {
        worst = err;
        worst_library = name;
      }
      char cell[32];
      std::snprintf(cell, sizeof(cell), " %.1f |", gflops);
      row += cell;
    }
    const bool pass = worst <= tolerance;
    all_pass = all_pass && pass;
    const std::string impl =
        matmul.implementation() +
        (packed.has_value() ? " (" + packed->implementation() + ")" : std::string());
    std::printf("| %s | %lld | %lld | %lld | %lld |%s %.1e%s | %s |\n", c.name.c_str(),
                static_cast<long long>(c.m), static_cast<long long>(c.n),
                static_cast<long long>(c.k), static_cast<long long>(c.batch()), row.c_str(), worst,
                pass ? "" : (" FAILED: " + worst_library).c_str(), impl.c_str());
    std::fflush(stdout);
  }
  std::printf("\ncheck: %s (tolerance %.0e)\n", all_pass ? "pass" : "FAILED", tolerance);
  return all_pass ? 0 : 1;
}

}  // namespace
}  // namespace xlmr::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const bool quick = absl::GetFlag(FLAGS_quick);
  if (quick) absl::SetFlag(&FLAGS_settle_ms, 0);
  return xlmr::bench::Main(quick, quick ? 1 : absl::GetFlag(FLAGS_warmup),
                           quick ? 3 : absl::GetFlag(FLAGS_repeats),
                           absl::GetFlag(FLAGS_tolerance), absl::GetFlag(FLAGS_cases));
}
