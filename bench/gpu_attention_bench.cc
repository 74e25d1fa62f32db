// gpu_attention_bench: our fused attention (ops::FusedAttention and ops::FusedAttentionBackward,
// the CUDA kernels of kernels/cuda/fused_attention.cu) alone, at XLM-R's shapes, so that it can
// be held against PyTorch's SDPA backends at the same shapes in the same device call (the
// project's goal: forward + backward within 1.25x of the fastest backend at seq 512, f16 and
// bf16) instead of only through a whole training step.
//
// What it measures: for XLM-R base (hidden 768, 12 heads) and large (1024, 16 heads), head_dim
// 64, at seq 512 batch 16 and seq 128 batch 64, every token real (key mask all ones), dropout
// --dropout with one fixed key, the mean milliseconds of --repeats calls (between two CUDA events
// on the compute stream, after --warmup untimed calls) of
//   fwd      FusedAttention: context [B,S,H] and logsumexp [B,heads,S] from q, k, v [B,S,H]
//   bwd      FusedAttentionBackward: dq, dk, dv, from the context and logsumexp of ONE forward
//            made before the timing (inputs are made once)
//   fwd_bwd  a forward, then the backward of that forward
// and TFLOP/s = FLOPs / time with FlashAttention's papers' count: forward 4*B*H*S*S*D (QK^T and
// PV, two FLOPs a multiply-add), backward 2.5x that (five products: QK^T again, dV, dP, dQ, dK),
// forward + backward 3.5x; H heads, D = 64. The count is of useful work: it leaves out what a
// kernel recomputes (ours computes the scores and dP twice in the backward) and the softmax.
// Output: one JSON object per shape on stdout (size, batch, seq, heads, dtype, dropout, impl
// "ours", fwd_ms, bwd_ms, fwd_bwd_ms, fwd_bwd_tflops). bench/gpu_attention_bench.py runs PyTorch
// at the same shapes and makes the table; tools/gpu_verify.sh's device mode runs all of it (part
// attention).
//
//   bazel build -c opt //bench:gpu_attention_bench
//   bazel-bin/bench/gpu_attention_bench --dtype=f16 >ours_f16.jsonl
//   bazel-bin/bench/gpu_attention_bench --dtype=bf16 --dropout=0 >ours_bf16_no_dropout.jsonl
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
#include "absl/flags/marshalling.h"
#include "bench/gpu_bench_common.h"
#include "framework/core/device.h"
#include "framework/ops/fused_attention.h"
#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"
#include "kernels/cuda/device_context.h"
#include "nlohmann/json.hpp"

ABSL_FLAG(std::string, dtype, "f16", "f16 | bf16: q, k, v, the context and the gradients");
ABSL_FLAG(double, dropout, 0.1, "attention dropout probability, in [0, 1)");
ABSL_FLAG(int, repeats, 20, "timed calls per measurement (their mean is reported)");
ABSL_FLAG(int, warmup, 3, "untimed calls first");

namespace xlmr::bench {
namespace {

using kernels::cuda::CudaContext;
using json = nlohmann::json;

constexpr int64_t kHeadDim = 64;

// The dropout key of every call: fixed, so every run draws the same masks (as in training, the
// mask is a function of the key; which key it is does not change the work). The values are those
// of tests/testing/attention_cases.h's kFusedAttentionCaseKey.
constexpr DropoutKey kBenchKey{/*seed=*/987654321987ull, /*step=*/5, /*micro_step=*/2,
                               /*layer=*/7, /*op=*/2};

struct AttentionShape {
  const char* size;
  int64_t hidden;
  int heads;
  int64_t seq, batch;
};

struct Settings {
  std::string dtype_name;
  DType dtype;
  double dropout;  // as given (reported); the ops take it as a float
  int repeats, warmup;
};

constexpr const char* kProgram = "gpu_attention_bench";

Settings ReadFlags() {
  Settings s;
  s.dtype_name = absl::GetFlag(FLAGS_dtype);
  s.dtype = HalfDTypeFlag(kProgram, s.dtype_name);
  s.dropout = absl::GetFlag(FLAGS_dropout);
  // Written so that NaN fails too (ops::FusedAttention would abort on it instead); the upper
  // bound on the float the ops take, to which 0.99999999 rounds as 1.
  if (!(s.dropout >= 0.0 && static_cast<float>(s.dropout) < 1.0f)) {
    ExitBadFlag(kProgram, "--dropout=" + absl::UnparseFlag(s.dropout) + ": must be in [0, 1) as a float");
  }
  s.repeats = absl::GetFlag(FLAGS_repeats);
  s.warmup = absl::GetFlag(FLAGS_warmup);
  CheckRepeatsAndWarmup(kProgram, s.repeats, s.warmup);
  return s;
}

// Operands uniform in [-2, 2): scores q.k / 8 of spread ~1, so the softmax rows are neither
// flat nor one-hot (the speed does not depend on the values, but infinities or NaNs could).
constexpr float kOperandBound = 2.0f;

// [B,S] i32 ones on the GPU: every key real, as in a packed or unpadded batch.
Tensor AllRealKeyMask(int64_t batch, int64_t seq) {
  Tensor host = Tensor::Zeros({batch, seq}, DType::kI32, Device::kCpu);
  for (int64_t i = 0; i < batch * seq; ++i) host.data<int32_t>()[i] = 1;
  return host.ToDevice(Device::kCuda);
}

double MeanMilliseconds(const std::function<void()>& work, const Settings& s) {
  return bench::MeanMilliseconds(work, s.warmup, s.repeats);
}

// The forward's FLOPs as FlashAttention counts them (see the header).
double ForwardFlops(const AttentionShape& shape) {
  return 4.0 * static_cast<double>(shape.batch) * shape.heads * shape.seq * shape.seq * kHeadDim;
}

// One shape's three timings through the ops, as the encoder block calls them.
json BenchShape(const Settings& s, const AttentionShape& shape, std::mt19937& rng) {
  const Shape activations = {shape.batch, shape.seq, shape.hidden};
  const Tensor q = RandomOnGpu(activations, s.dtype, kOperandBound, rng);
  const Tensor k = RandomOnGpu(activations, s.dtype, kOperandBound, rng);
  const Tensor v = RandomOnGpu(activations, s.dtype, kOperandBound, rng);
  const Tensor d_context = RandomOnGpu(activations, s.dtype, kOperandBound, rng);
  const Tensor mask = AllRealKeyMask(shape.batch, shape.seq);
  const float p = static_cast<float>(s.dropout);
  const auto forward = [&] {
    return ops::FusedAttention(q, k, v, mask, shape.heads, p, kBenchKey);
  };
  const auto backward = [&](const ops::FusedAttentionOutput& saved) {
    return ops::FusedAttentionBackward(d_context, q, k, v, saved.context, saved.logsumexp, mask,
                                       shape.heads, p, kBenchKey);
  };

  const double fwd_ms = MeanMilliseconds([&] { forward(); }, s);
  const ops::FusedAttentionOutput saved = forward();
  const double bwd_ms = MeanMilliseconds([&] { backward(saved); }, s);
  const double fwd_bwd_ms = MeanMilliseconds([&] { backward(forward()); }, s);
  return {{"size", shape.size}, {"batch", shape.batch}, {"seq", shape.seq},
          {"heads", shape.heads}, {"dtype", s.dtype_name}, {"dropout", s.dropout},
          {"impl", "ours"}, {"fwd_ms", fwd_ms}, {"bwd_ms", bwd_ms}, {"fwd_bwd_ms", fwd_bwd_ms},
          {"fwd_bwd_tflops", 3.5 * ForwardFlops(shape) / fwd_bwd_ms / 1e9}};
}

int Main(const Settings& s) {
  if (!InitGpuOrSay(kProgram)) return 1;
  if (!ops::FusedAttentionSupported(Device::kCuda, s.dtype, kHeadDim)) {
    std::cerr << "gpu_attention_bench: this GPU has no fused attention kernel for " << s.dtype_name
              << " (too little shared memory per block)\n";
    return 1;
  }
  const AttentionShape shapes[] = {{"base", 768, 12, 512, 16}, {"base", 768, 12, 128, 64},
                                   {"large", 1024, 16, 512, 16}, {"large", 1024, 16, 128, 64}};
  std::mt19937 rng(42);
  for (const AttentionShape& shape : shapes) {
    std::cout << BenchShape(s, shape, rng).dump() << std::endl;
  }
  return 0;
}

}  // namespace
}  // namespace xlmr::bench

int main(int argc, char** argv) {
  xlmr::bench::ParseFlagsOrExit(argc, argv, xlmr::bench::kProgram,
                                "Times ops::FusedAttention and its backward at XLM-R's shapes (see the source).");
  return xlmr::bench::Main(xlmr::bench::ReadFlags());
}
