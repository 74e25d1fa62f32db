// attention_op_bench: the attention op alone on the CPU, fused vs eager, forward + backward.
//
// For one shape [batch, seq, hidden] with `heads` heads it times ops::Attention +
// ops::AttentionBackward and ops::FusedAttention + ops::FusedAttentionBackward (fp32, dropout
// as given), taking turns call by call so that a change of load on a shared machine affects
// both alike, and prints one Markdown row per implementation: median forward and backward
// milliseconds and the bytes each keeps between them (probabilities vs logsumexp). Threads:
// OPENBLAS_NUM_THREADS, as for every CPU kernel.
//
// With --packed_lengths=LOW:HIGH it instead compares, for a batch of `batch` sequences of lengths
// uniform in [LOW, HIGH] (seeded), fused attention padded to the longest (ops::FusedAttention
// with a key mask) with the same batch packed (ops::VarlenFusedAttention), forward + backward,
// and prints real tokens per second of each.
//
//   bazel build -c opt //bench:attention_op_bench
//   OPENBLAS_NUM_THREADS=2 bazel-bin/bench/attention_op_bench --batch=2 --seq=512
//   OPENBLAS_NUM_THREADS=2 bazel-bin/bench/attention_op_bench --batch=32 --packed_lengths=16:256
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "framework/ops/attention.h"
#include "framework/ops/fused_attention.h"
#include "framework/ops/varlen_fused_attention.h"
#include "framework/tensor/tensor.h"

ABSL_FLAG(int, batch, 2, "sequences");
ABSL_FLAG(int, seq, 512, "tokens per sequence (no padding)");
ABSL_FLAG(int, hidden, 768, "hidden size");
ABSL_FLAG(int, heads, 12, "attention heads");
ABSL_FLAG(double, dropout, 0.1, "attention dropout probability");
ABSL_FLAG(int, repeats, 10, "timed calls of each (after one warm-up call)");
ABSL_FLAG(std::string, packed_lengths, "",
          "LOW:HIGH: compare padded and packed fused attention on `batch` sequences of lengths "
          "uniform in [LOW, HIGH] instead of fused and eager");
ABSL_FLAG(int, length_seed, 1, "seed of the --packed_lengths draw");

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

// Padded vs packed fused attention on one mixed-length batch (the --packed_lengths mode).
int RunPacked(int low, int high) {
  const int batch = absl::GetFlag(FLAGS_batch), hidden = absl::GetFlag(FLAGS_hidden);
  const int heads = absl::GetFlag(FLAGS_heads);
  const float p = static_cast<float>(absl::GetFlag(FLAGS_dropout));
  std::mt19937 rng(static_cast<uint32_t>(absl::GetFlag(FLAGS_length_seed)));
  std::uniform_int_distribution<int> draw(low, high);
  std::vector<int> lengths(static_cast<size_t>(batch));
  for (int& n : lengths) n = draw(rng);
  const int longest = *std::max_element(lengths.begin(), lengths.end());
  int tokens = 0;
  for (int n : lengths) tokens += n;
  // The stride both forms draw their dropout mask with (what a trainer would fix: the longest
  // sequence it takes); the padded form's mask then equals the packed one.
  const int64_t stride = high;
  Tensor cu = Tensor::Zeros({batch + 1}, DType::kI32);
  for (int b = 0; b < batch; ++b) cu.data<int32_t>()[b + 1] = cu.data<int32_t>()[b] + lengths[b];
  const Shape packed_shape{tokens, hidden}, padded_shape{batch, longest, hidden};
  const Tensor q = Random(packed_shape, 1), k = Random(packed_shape, 2), v = Random(packed_shape, 3),
               dy = Random(packed_shape, 4);
  const Tensor pq = Random(padded_shape, 1), pk = Random(padded_shape, 2),
               pv = Random(padded_shape, 3), pdy = Random(padded_shape, 4);
  Tensor mask = Tensor::Zeros({batch, longest}, DType::kI32);
  for (int b = 0; b < batch; ++b) {
    for (int s = 0; s < lengths[b]; ++s) mask.data<int32_t>()[b * longest + s] = 1;
  }
  const DropoutKey key{42, 0, 0, 0, 1};
  Timings padded, packed;
  for (int r = 0; r <= absl::GetFlag(FLAGS_repeats); ++r) {
    Clock::time_point t0 = Clock::now();
    ops::FusedAttentionOutput f = ops::FusedAttention(pq, pk, pv, mask, heads, p, key, stride);
    Clock::time_point t1 = Clock::now();
    ops::FusedAttentionBackward(pdy, pq, pk, pv, f.context, f.logsumexp, mask, heads, p, key,
                                stride);
    Clock::time_point t2 = Clock::now();
    if (r > 0) padded.forward_ms.push_back(Milliseconds(t0, t1)), padded.backward_ms.push_back(Milliseconds(t1, t2));

    t0 = Clock::now();
    ops::FusedAttentionOutput g =
        ops::VarlenFusedAttention(q, k, v, cu, longest, heads, p, key, stride);
    t1 = Clock::now();
    ops::VarlenFusedAttentionBackward(dy, q, k, v, g.context, g.logsumexp, cu, longest, heads, p,
                                      key, stride);
    t2 = Clock::now();
    if (r > 0) packed.forward_ms.push_back(Milliseconds(t0, t1)), packed.backward_ms.push_back(Milliseconds(t1, t2));
  }
  std::printf("fused attention, %d sequences of lengths uniform in [%d, %d] (seed %d): %d real tokens, "
              "%d padded (longest %d, %.0f%% real); hidden %d, %d heads, fp32, dropout %.2f, "
              "medians of %d calls:\n\n",
              batch, low, high, absl::GetFlag(FLAGS_length_seed), tokens, batch * longest, longest,
              100.0 * tokens / (batch * longest), hidden, heads, p, absl::GetFlag(FLAGS_repeats));
  std::printf("| batch | forward (ms) | backward (ms) | total (ms) | real tokens/s |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  for (const auto& [name, t] : {std::pair{"padded", &padded}, std::pair{"packed", &packed}}) {
    const double f = Median(t->forward_ms), b = Median(t->backward_ms);
    std::printf("| %s | %.1f | %.1f | %.1f | %.0f |\n", name, f, b, f + b, tokens / ((f + b) / 1000.0));
  }
  std::printf("\npacked speed vs padded: %.2fx\n",
              (Median(padded.forward_ms) + Median(padded.backward_ms)) /
                  (Median(packed.forward_ms) + Median(packed.backward_ms)));
  return 0;
}

int Run() {
  const std::string packed_lengths = absl::GetFlag(FLAGS_packed_lengths);
  if (!packed_lengths.empty()) {
    int low = 0, high = 0;
    if (std::sscanf(packed_lengths.c_str(), "%d:%d", &low, &high) != 2 || low < 1 || high < low) {
      std::fprintf(stderr, "--packed_lengths=%s: expected LOW:HIGH with 1 <= LOW <= HIGH\n",
                   packed_lengths.c_str());
      return 2;
    }
    return RunPacked(low, high);
  }
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
