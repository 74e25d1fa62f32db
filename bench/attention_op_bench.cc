// attention_op_bench: the attention op alone on the CPU, fused vs eager, forward + backward.
//
// For one shape [batch, seq, hidden] with `heads` heads it times ops::Attention +
// ops::AttentionBackward and ops::FusedAttention + ops::FusedAttentionBackward (fp32, dropout
// as given), taking turns call by call so that a change of load on a shared machine affects
// both alike, and prints one Markdown row per implementation: median forward and backward
// milliseconds and the bytes each keeps between them (probabilities vs logsumexp). Threads:
// OPENBLAS_NUM_THREADS, as for every CPU kernel.
//
//   bazel build -c opt //bench:attention_op_bench
//   OPENBLAS_NUM_THREADS=2 bazel-bin/bench/attention_op_bench --batch=2 --seq=512
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "framework/ops/attention.h"
#include "framework/ops/fused_attention.h"
#include "framework/tensor/tensor.h"

ABSL_FLAG(int, batch, 2, "sequences");
ABSL_FLAG(int, seq, 512, "tokens per sequence (no padding)");
ABSL_FLAG(int, hidden, 768, "hidden size");
ABSL_FLAG(int, heads, 12, "attention heads");
ABSL_FLAG(double, dropout, 0.1, "attention dropout probability");
ABSL_FLAG(int, repeats, 10, "timed calls of each (after one warm-up call)");

namespace xlmr {
namespace {

using Clock = std::chrono::steady_clock;

Tensor Random(const Shape& shape, uint32_t seed) {
  Tensor t = Tensor::Zeros(shape, DType::kF32);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = uniform(rng);
  return t;
}

double Milliseconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Timings {
  std::vector<double> forward_ms, backward_ms;
  int64_t kept_bytes = 0;  // what the forward keeps for the backward besides q, k, v, context
};

int Run() {
  const int batch = absl::GetFlag(FLAGS_batch), seq = absl::GetFlag(FLAGS_seq);
  const int hidden = absl::GetFlag(FLAGS_hidden), heads = absl::GetFlag(FLAGS_heads);
  const float p = static_cast<float>(absl::GetFlag(FLAGS_dropout));
  const Shape shape{batch, seq, hidden};
  const Tensor q = Random(shape, 1), k = Random(shape, 2), v = Random(shape, 3), dy = Random(shape, 4);
  Tensor mask = Tensor::Zeros({batch, seq}, DType::kI32);
  for (int64_t i = 0; i < mask.numel(); ++i) mask.data<int32_t>()[i] = 1;
  const DropoutKey key{42, 0, 0, 0, 1};
  Timings eager, fused;
  for (int r = 0; r <= absl::GetFlag(FLAGS_repeats); ++r) {
    Clock::time_point t0 = Clock::now();
    ops::AttentionOutput e = ops::Attention(q, k, v, mask, heads, p, key);
    Clock::time_point t1 = Clock::now();
    ops::AttentionBackward(dy, q, k, v, e.probs, mask, heads, p, key);
    Clock::time_point t2 = Clock::now();
    eager.kept_bytes = e.probs.bytes();
    if (r > 0) eager.forward_ms.push_back(Milliseconds(t0, t1)), eager.backward_ms.push_back(Milliseconds(t1, t2));

    t0 = Clock::now();
    ops::FusedAttentionOutput f = ops::FusedAttention(q, k, v, mask, heads, p, key);
    t1 = Clock::now();
    ops::FusedAttentionBackward(dy, q, k, v, f.context, f.logsumexp, mask, heads, p, key);
    t2 = Clock::now();
    fused.kept_bytes = f.logsumexp.bytes();
    if (r > 0) fused.forward_ms.push_back(Milliseconds(t0, t1)), fused.backward_ms.push_back(Milliseconds(t1, t2));
  }
  std::printf("attention [%d, %d, %d], %d heads, fp32, dropout %.2f, medians of %d calls:\n\n", batch, seq,
              hidden, heads, p, absl::GetFlag(FLAGS_repeats));
  std::printf("| attention | forward (ms) | backward (ms) | total (ms) | kept for backward (bytes) |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  for (const auto& [name, t] : {std::pair{"eager", &eager}, std::pair{"fused", &fused}}) {
    const double f = Median(t->forward_ms), b = Median(t->backward_ms);
    std::printf("| %s | %.1f | %.1f | %.1f | %lld |\n", name, f, b, f + b, static_cast<long long>(t->kept_bytes));
  }
  std::printf("\nfused speed vs eager: %.2fx\n",
              (Median(eager.forward_ms) + Median(eager.backward_ms)) / (Median(fused.forward_ms) + Median(fused.backward_ms)));
  return 0;
}

}  // namespace
}  // namespace xlmr

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return xlmr::Run();
}
