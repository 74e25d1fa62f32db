// One attention problem for the attention op tests (attention_test.cc, fused_attention_test.cc):
// sizes, padding (each sequence's `lengths[b]` real tokens come first, or last when the batch is
// left-padded) and dropout, with the
// index arithmetic of the [B,S,H] activations, the [B,heads,S,S] probabilities and the
// [B,heads,S] rows.
#ifndef XLMR_TESTS_FRAMEWORK_OPS_ATTENTION_PROBLEM_H_
#define XLMR_TESTS_FRAMEWORK_OPS_ATTENTION_PROBLEM_H_

#include <cstdint>
#include <ostream>
#include <vector>

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::testing {

struct AttentionProblem {
  int64_t batch, seq, hidden;
  int heads;
  std::vector<int> lengths;  // real tokens per sequence
  float dropout_p = 0.0f;
  DropoutKey key{};
  // Left padding (tokenizers with padding_side="left"): the real tokens are the last lengths[b]
  // of each row. With S - lengths[b] >= 64 a row's whole first key tile is padding, so the fused
  // kernels' running max starts at the padding bias and must be rescaled away on the first real
  // tile.
  bool left_padded = false;

  int64_t head_dim() const { return hidden / heads; }
  int64_t elements() const { return batch * seq * hidden; }
  Shape shape() const { return {batch, seq, hidden}; }
  int64_t X(int64_t b, int64_t s, int64_t h, int64_t c) const {
    return (b * seq + s) * hidden + h * head_dim() + c;
  }
  int64_t Row(int64_t b, int64_t h, int64_t i) const { return (b * heads + h) * seq + i; }
  int64_t P(int64_t b, int64_t h, int64_t i, int64_t j) const { return Row(b, h, i) * seq + j; }

  // Whether key s of sequence b is a real token (the test references' mask).
  bool IsReal(int64_t b, int64_t s) const {
    return left_padded ? s >= seq - lengths[b] : s < lengths[b];
  }

  // The [B,S] i32 key mask: 1 for the real tokens of sequence b, 0 for its padding.
  Tensor KeyMask() const {
    Tensor mask = Tensor::Zeros({batch, seq}, DType::kI32);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t s = 0; s < seq; ++s) mask.data<int32_t>()[b * seq + s] = IsReal(b, s);
    }
    return mask;
  }
};

inline void PrintTo(const AttentionProblem& pr, std::ostream* os) {
  *os << "B=" << pr.batch << " S=" << pr.seq << " H=" << pr.hidden << " heads=" << pr.heads
      << " dropout_p=" << pr.dropout_p << (pr.left_padded ? " left-padded" : "");
}

}  // namespace xlmr::testing

#endif  // XLMR_TESTS_FRAMEWORK_OPS_ATTENTION_PROBLEM_H_
