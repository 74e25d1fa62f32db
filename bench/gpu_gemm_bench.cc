// gpu_gemm_bench: cuBLASLt's matrix products at XLM-R's Linear shapes, issued exactly as
// kernels/cuda/linear.cu issues them, so that a choice of algorithm (--gemm_algorithms) can be
// judged product by product instead of only through a whole training step.
//
// What it measures: for the base (hidden 768, intermediate 3072) and large (1024, 4096) encoders,
// each Linear (attention projection H->H, intermediate H->I, output I->H) on --tokens rows, the
// mean milliseconds of --repeats calls (between two CUDA events on the compute stream, after
// --warmup untimed calls: the first one plans, and under `measured` times the candidates) of
//   forward      y[T,out] = x[T,in] w[out,in]^T + b     Gemm, f16|bf16 bias epilogue, y f16|bf16
//   input_grad   dx[T,in] = dy[T,out] w[out,in]          Gemm into f16|bf16
//   weight_grad  dw[out,in] += dy^T x (f32 C, beta 1)   GemmWithRowSumsOfA (the bias gradient from
//                                                        cuBLASLt's BGRADB epilogue), or Gemm
//                                                        alone where cuBLASLt has no such kernel
//                                                        (row_sums_fused false; linear.cu then sums
//                                                        the rows in a kernel not timed here)
// and TFLOP/s = 2*m*n*k / time, with m, n, k of the row-major product C[m,n] = op(A) op(B).
// Output: one JSON object per product on stdout, then {"plans", "measured", "candidates_timed"}
// (kernels/cuda/gemm.h's CountGemmPlans). bench/gpu_gemm_bench.py runs PyTorch at the same shapes
// and makes the table; tools/gpu_verify.sh's device mode runs all of it (part gemm).
//
//   bazel build -c opt //bench:gpu_gemm_bench
//   bazel-bin/bench/gpu_gemm_bench --gemm_algorithms=heuristic >heuristic.jsonl
//   bazel-bin/bench/gpu_gemm_bench --gemm_algorithms=measured >measured.jsonl
//
// Exit status: 0, 1 when no GPU can be used (one line saying why), 2 for a bad flag.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "bench/gpu_bench_common.h"
#include "framework/core/device.h"
#include "framework/tensor/tensor.h"
#include "kernels/cuda/device_context.h"
#include "kernels/cuda/gemm.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(std::string, gemm_algorithms, "heuristic",
          "heuristic | measured: how each product's cuBLASLt algorithm is chosen (gemm.h)");
ABSL_FLAG(int64_t, tokens, 8192, "rows of every Linear's input (batch x sequence length)");
ABSL_FLAG(std::string, dtype, "f16", "f16 | bf16: operands, bias and 16-bit outputs");
ABSL_FLAG(int, repeats, 20, "timed calls per product (their mean is reported)");
ABSL_FLAG(int, warmup, 3, "untimed calls first (the first plans the product)");

namespace xlmr::bench {
namespace {

using kernels::cuda::CudaContext;
using kernels::cuda::GemmAlgorithms;
using kernels::cuda::Transpose;
using json = nlohmann::json;

struct ModelSize {
  const char* name;
  int64_t hidden, intermediate;
};

struct LinearShape {
  const char* name;
  int64_t in, out;
};

struct Settings {
  GemmAlgorithms algorithms;
  std::string algorithms_name, dtype_name;
  DType dtype;
  int64_t tokens;
  int repeats, warmup;
};

constexpr const char* kProgram = "gpu_gemm_bench";

Settings ReadFlags() {
  Settings s;
  s.algorithms_name = absl::GetFlag(FLAGS_gemm_algorithms);
  if (s.algorithms_name == "heuristic") {
    s.algorithms = GemmAlgorithms::kHeuristic;
  } else if (s.algorithms_name == "measured") {
    s.algorithms = GemmAlgorithms::kMeasured;
  } else {
    ExitBadFlag(kProgram, "--gemm_algorithms=" + s.algorithms_name + ": must be heuristic or measured");
  }
  s.dtype_name = absl::GetFlag(FLAGS_dtype);
  s.dtype = HalfDTypeFlag(kProgram, s.dtype_name);
  s.tokens = absl::GetFlag(FLAGS_tokens);
  s.repeats = absl::GetFlag(FLAGS_repeats);
  s.warmup = absl::GetFlag(FLAGS_warmup);
  if (s.tokens < 1) ExitBadFlag(kProgram, "--tokens=" + std::to_string(s.tokens) + ": must be at least 1");
  CheckRepeatsAndWarmup(kProgram, s.repeats, s.warmup);
  return s;
}

// Small operands (uniform in [-0.1, 0.1]): the products' speed does not depend on the values,
// but denormals, infinities or NaNs could.
constexpr float kOperandBound = 0.1f;

double MeanMilliseconds(const std::function<void()>& product, const Settings& s) {
  return bench::MeanMilliseconds(product, s.warmup, s.repeats);
}

// One output line: the product's identity, shape and speed.
json Record(const Settings& s, const ModelSize& size, const LinearShape& linear,
            const char* product, int64_t m, int64_t n, int64_t k, double ms) {
  return {{"size", size.name}, {"linear", linear.name}, {"product", product},
          {"m", m}, {"n", n}, {"k", k}, {"dtype", s.dtype_name},
          {"algorithms", s.algorithms_name}, {"ms", ms},
          {"tflops", 2.0 * static_cast<double>(m) * n * k / ms / 1e9}};
}

// The three products of one Linear, as linear.cu issues them.
void BenchLinear(const Settings& s, const ModelSize& size, const LinearShape& linear,
                 std::mt19937& rng) {
  const int64_t t = s.tokens, in = linear.in, out = linear.out;
  const auto random = [&](const Shape& shape) { return RandomOnGpu(shape, s.dtype, kOperandBound, rng); };
  const Tensor x = random({t, in}), w = random({out, in}), bias = random({out}), dy = random({t, out});
  // Outputs written whole by beta-0 products; dweight is accumulated into (beta 1), so zeroed.
  Tensor y = Tensor::Empty({t, out}, s.dtype, Device::kCuda, MemoryCategory::kActivations);
  Tensor dx = Tensor::Empty({t, in}, s.dtype, Device::kCuda, MemoryCategory::kActivations);
  Tensor dweight = Tensor::Zeros({out, in}, DType::kF32, Device::kCuda, MemoryCategory::kGradients);
  Tensor sums = Tensor::Empty({out}, DType::kF32, Device::kCuda, MemoryCategory::kWorkspace);

  const double forward_ms = MeanMilliseconds(
      [&] { kernels::cuda::Gemm(x, Transpose::kNo, w, Transpose::kYes, bias, 1.0f, 0.0f, &y); }, s);
  std::cout << Record(s, size, linear, "forward", t, out, in, forward_ms).dump() << std::endl;

  const double input_ms = MeanMilliseconds(
      [&] { kernels::cuda::Gemm(dy, Transpose::kNo, w, Transpose::kNo, Tensor(), 1.0f, 0.0f, &dx); }, s);
  std::cout << Record(s, size, linear, "input_grad", t, in, out, input_ms).dump() << std::endl;

  // Whether the fused form exists is the first call's answer (it does not change per call).
  std::optional<bool> fused;
  const double weight_ms = MeanMilliseconds(
      [&] {
        if (fused.value_or(true)) {
          const bool ran = kernels::cuda::GemmWithRowSumsOfA(dy, Transpose::kYes, x, Transpose::kNo,
                                                             1.0f, 1.0f, &dweight, &sums);
          if (!fused.has_value()) fused = ran;
          if (ran) return;
        }
        kernels::cuda::Gemm(dy, Transpose::kYes, x, Transpose::kNo, Tensor(), 1.0f, 1.0f, &dweight);
      },
      s);
  json weight = Record(s, size, linear, "weight_grad", out, in, t, weight_ms);
  weight["row_sums_fused"] = fused.value_or(false);
  std::cout << weight.dump() << std::endl;
}

int Main(const Settings& s) {
  if (!InitGpuOrSay(kProgram)) return 1;
  kernels::cuda::SetGemmAlgorithms(s.algorithms);
  const ModelSize sizes[] = {{"base", 768, 3072}, {"large", 1024, 4096}};
  std::mt19937 rng(42);
  for (const ModelSize& size : sizes) {
    const LinearShape linears[] = {{"attention", size.hidden, size.hidden},
                                   {"intermediate", size.hidden, size.intermediate},
                                   {"output", size.intermediate, size.hidden}};
    for (const LinearShape& linear : linears) BenchLinear(s, size, linear, rng);
  }
  const kernels::cuda::GemmPlanCounts plans = kernels::cuda::CountGemmPlans();
  std::cout << json{{"plans", plans.problems}, {"measured", plans.measured},
                    {"candidates_timed", plans.candidates_timed}}.dump()
            << std::endl;
  return 0;
}

}  // namespace
}  // namespace xlmr::bench

int main(int argc, char** argv) {
  xlmr::bench::ParseFlagsOrExit(argc, argv, xlmr::bench::kProgram,
                                "Times cuBLASLt's products at XLM-R's Linear shapes (see the source).");
  return xlmr::bench::Main(xlmr::bench::ReadFlags());
}
