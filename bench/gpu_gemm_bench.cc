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
#include "absl/flags/parse.h"
#include "framework/core/device.h"
#include "framework/tensor/tensor.h"
#include "kernels/cuda/cuda_check.h"
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

// One line on stderr and exit status 2: a flag the benchmark cannot run with.
[[noreturn]] void BadFlag(const std::string& message) {
  std::cerr << "gpu_gemm_bench: " << message << "\n";
  std::exit(2);
}

Settings ReadFlags() {
  Settings s;
  s.algorithms_name = absl::GetFlag(FLAGS_gemm_algorithms);
  if (s.algorithms_name == "heuristic") {
    s.algorithms = GemmAlgorithms::kHeuristic;
  } else if (s.algorithms_name == "measured") {
    s.algorithms = GemmAlgorithms::kMeasured;
  } else {
    BadFlag("--gemm_algorithms=" + s.algorithms_name + ": must be heuristic or measured");
  }
  s.dtype_name = absl::GetFlag(FLAGS_dtype);
  if (s.dtype_name == "f16") {
    s.dtype = DType::kF16;
  } else if (s.dtype_name == "bf16") {
    s.dtype = DType::kBF16;
  } else {
    BadFlag("--dtype=" + s.dtype_name + ": must be f16 or bf16");
  }
  s.tokens = absl::GetFlag(FLAGS_tokens);
  s.repeats = absl::GetFlag(FLAGS_repeats);
  s.warmup = absl::GetFlag(FLAGS_warmup);
  if (s.tokens < 1) BadFlag("--tokens=" + std::to_string(s.tokens) + ": must be at least 1");
  if (s.repeats < 1) BadFlag("--repeats=" + std::to_string(s.repeats) + ": must be at least 1");
  // At least one untimed call, so that planning (and under `measured` the timing of the
  // candidates) never lands inside the timed calls.
  if (s.warmup < 1) BadFlag("--warmup=" + std::to_string(s.warmup) + ": must be at least 1");
  return s;
}

// A GPU tensor of small random values (uniform in [-0.1, 0.1], rounded to dtype): the products'
// speed does not depend on them, but denormals, infinities or NaNs could.
Tensor RandomOnGpu(const Shape& shape, DType dtype, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-0.1f, 0.1f);
  std::vector<float> values(static_cast<size_t>(NumElements(shape)));
  for (float& v : values) v = uniform(rng);
  Tensor host = Tensor::Zeros(shape, dtype, Device::kCpu);
  host.CopyFromFloats(values);
  return host.ToDevice(Device::kCuda);
}

// Mean milliseconds of one call of `product` (which queues its work on the compute stream):
// `warmup` untimed calls, then `repeats` calls between two events.
double MeanMilliseconds(const std::function<void()>& product, const Settings& s) {
  cudaStream_t stream = CudaContext::Current().compute_stream();
  for (int i = 0; i < s.warmup; ++i) product();
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start, stream));
  for (int i = 0; i < s.repeats; ++i) product();
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float total = 0.0f;
  CUDA_CHECK(cudaEventElapsedTime(&total, start, stop));
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return static_cast<double>(total) / s.repeats;
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
  const Tensor x = RandomOnGpu({t, in}, s.dtype, rng), w = RandomOnGpu({out, in}, s.dtype, rng);
  const Tensor bias = RandomOnGpu({out}, s.dtype, rng), dy = RandomOnGpu({t, out}, s.dtype, rng);
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
  const auto context = kernels::cuda::CudaContext::Init(0);
  if (!context.ok()) {
    std::cerr << "gpu_gemm_bench: no GPU to use: " << context.status().message() << "\n";
    return 1;
  }
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
  absl::ParseCommandLine(argc, argv);
  return xlmr::bench::Main(xlmr::bench::ReadFlags());
}
