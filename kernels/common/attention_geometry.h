// The shape of one masked multi-head self-attention call, shared by the CPU kernels
// (kernels/cpu/attention.cc) and the CUDA kernels (kernels/cuda/attention.cu) so that both
// read q, k, v and the probabilities with the same index arithmetic.
//
// B = batch, S = sequence length, H = hidden size = heads * head_dim; q, k, v and the context
// are [B,S,H] row-major, the probabilities [B,heads,S,S].
#ifndef XLMR_KERNELS_COMMON_ATTENTION_GEOMETRY_H_
#define XLMR_KERNELS_COMMON_ATTENTION_GEOMETRY_H_

#include <cstdint>

#include "framework/tensor/tensor.h"

namespace xlmr::kernels {

// torch.finfo(torch.float32).min: the additive mask Hugging Face puts on padding keys. Adding
// it (rather than -inf) keeps a row whose keys are all padding finite: it softmaxes to uniform.
inline constexpr float kPaddingKeyBias = -3.4028234663852886e38f;

struct AttentionGeometry {
  int64_t batch;
  int64_t seq;
  int64_t hidden;
  int64_t heads;
  int64_t head_dim;

  // Offset of head h's first column of batch b inside a [B,S,H] tensor (row stride hidden).
  int64_t HeadOffset(int64_t b, int64_t h) const { return b * seq * hidden + h * head_dim; }
  // Offset of the [S,S] block of (b, h) inside a [B,heads,S,S] tensor.
  int64_t ProbsOffset(int64_t b, int64_t h) const { return (b * heads + h) * seq * seq; }
  // Rows of all score matrices together (B * heads * S) and their elements (times S).
  int64_t rows() const { return batch * heads * seq; }
  int64_t probs_elements() const { return rows() * seq; }
};

// The geometry of q [B,S,H] split into `num_heads` heads (H divisible by num_heads: the op
// layer, framework/ops/attention.h, checks it).
inline AttentionGeometry AttentionGeometryOf(const Tensor& q, int num_heads) {
  return {q.dim(0), q.dim(1), q.dim(2), num_heads, q.dim(2) / num_heads};
}

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_ATTENTION_GEOMETRY_H_
