#include "kernels/cpu/attention.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "framework/tensor/half.h"
#include "kernels/common/attention_dropout_index.h"
#include "kernels/common/attention_geometry.h"
#include "kernels/cpu/dropout.h"
#include "kernels/cpu/dropout_uniforms.h"
#include "kernels/cpu/float_access.h"
#include "kernels/cpu/parallel.h"

namespace xlmr::kernels::cpu {
namespace {

void RoundAll(DType dtype, int64_t count, float* values) {
  if (dtype == DType::kF32) return;
  for (int64_t i = 0; i < count; ++i) values[i] = StoredAs(dtype, values[i]);
}

// Additive bias per key of batch row b: 0 for real tokens, kPaddingKeyBias for padding.
std::vector<float> KeyBiasRow(const Tensor& key_mask, int64_t b, int64_t seq) {
  const int32_t* mask = key_mask.data<int32_t>() + b * seq;
  std::vector<float> bias(static_cast<size_t>(seq));
  for (int64_t j = 0; j < seq; ++j) bias[j] = mask[j] != 0 ? 0.0f : kPaddingKeyBias;
  return bias;
}

// Attention dropout on one head's [S,S] probabilities, with the rule of ops::Dropout: element
// (i, j) of pair (b, h) has index AttentionDropoutIndex(b * heads + h, stride, i, j)
// (kernels/common/attention_dropout_index.h), kept iff DropoutUniform >= p, kept values
// multiplied by DropoutScale(p) in fp32. Regenerated identically in backward; nothing is stored.
class HeadDropout {
 public:
  HeadDropout(float p, const DropoutKey& key, int64_t seq, int64_t stride)
      : p_(p),
        keep_scale_(DropoutScale(p)),
        key_(key),
        seq_(seq),
        stride_(stride),
        uniforms_(p > 0.0f ? static_cast<size_t>(seq) : 0) {}

  // values[i * S + j] = keep(pair, i, j) ? values[i * S + j] * (1/(1-p)) : 0.
  void ApplyInPlace(int64_t pair, float* values) {
    if (p_ == 0.0f) return;
    for (int64_t i = 0; i < seq_; ++i) {
      DropoutUniformsVectorized(key_, AttentionDropoutIndex(pair, stride_, i, 0), seq_,
                                uniforms_.data());
      float* row = values + i * seq_;
      for (int64_t j = 0; j < seq_; ++j) row[j] = uniforms_[j] >= p_ ? row[j] * keep_scale_ : 0.0f;
    }
  }

 private:
  float p_;
  float keep_scale_;
  DropoutKey key_;
  int64_t seq_;
  int64_t stride_;
  std::vector<float> uniforms_;
};

// scores[S,S] = (q_h k_h^T) * scale, with torch's fp16 roundings (GEMM result, then product).
void HeadScores(const float* q_head, const float* k_head, const AttentionGeometry& g, float scale,
                DType dtype, float* scores) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, g.seq, g.seq, g.head_dim, 1.0f, q_head,
              g.hidden, k_head, g.hidden, 0.0f, scores, g.seq);
  for (int64_t i = 0; i < g.seq * g.seq; ++i) {
    scores[i] = StoredAs(dtype, StoredAs(dtype, scores[i]) * scale);
  }
}

// probs[i, :] = softmax over keys of scores[i, :] + key_bias, in fp32.
void MaskedSoftmaxRows(const float* scores, const std::vector<float>& key_bias, int64_t seq,
                       float* probs) {
  for (int64_t i = 0; i < seq; ++i) {
    const float* in = scores + i * seq;
    float* out = probs + i * seq;
    float row_max = -INFINITY;
    for (int64_t j = 0; j < seq; ++j) {
      out[j] = in[j] + key_bias[j];
      row_max = std::max(row_max, out[j]);
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < seq; ++j) {
      out[j] = std::exp(out[j] - row_max);
      sum += out[j];
    }
    for (int64_t j = 0; j < seq; ++j) out[j] /= sum;
  }
}

// dropped[S,S] = the probabilities as the P*V GEMM reads them: after dropout, in q's dtype.
void DroppedProbs(const float* probs, int64_t pair, DType dtype, int64_t count,
                  HeadDropout* dropout, float* dropped) {
  std::copy(probs, probs + count, dropped);
  dropout->ApplyInPlace(pair, dropped);
  RoundAll(dtype, count, dropped);
}

// In place: d[i, :] = P[i, :] * (d[i, :] - sum_j d[i, j] P[i, j]) (softmax backward, fp32).
void SoftmaxBackwardRows(const float* probs, int64_t seq, float* d) {
  for (int64_t i = 0; i < seq; ++i) {
    const float* p = probs + i * seq;
    float* row = d + i * seq;
    float dot = 0.0f;
    for (int64_t j = 0; j < seq; ++j) dot += row[j] * p[j];
    for (int64_t j = 0; j < seq; ++j) row[j] = p[j] * (row[j] - dot);
  }
}

float SoftmaxScale(const AttentionGeometry& g) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(g.head_dim)));
}

// Calls heads_fn(begin, end) over ranges of the flat (batch, head) index b * heads + h, spread
// over the CPU threads: the heads are independent and every GEMM runs on its calling thread
// (gemm.h), so each head is computed exactly as alone, whatever the thread count.
template <typename HeadsFn>
void ForEachHeadRange(const AttentionGeometry& g, const HeadsFn& heads_fn) {
  ParallelFor(g.seq > 0 ? g.batch * g.heads : 0, 1, heads_fn);
}

// The f32 views one attention forward reads and writes (the caller owns the tensors).
struct ForwardBuffers {
  const float* q;
  const float* k;
  const float* v;
  float* probs;
  float* context;
};

// Forward of heads [begin, end) of the flat (batch, head) index.
void ForwardHeads(const AttentionGeometry& g, DType dtype, const Tensor& key_mask, float dropout_p,
                  const DropoutKey& dropout_key, int64_t dropout_stride,
                  const ForwardBuffers& buf, int64_t begin, int64_t end) {
  const int64_t block = g.seq * g.seq;
  std::vector<float> scores(static_cast<size_t>(block)), dropped(static_cast<size_t>(block));
  HeadDropout dropout(dropout_p, dropout_key, g.seq, dropout_stride);
  for (int64_t pair = begin; pair < end; ++pair) {
    const int64_t b = pair / g.heads, h = pair % g.heads;
    const int64_t head = g.HeadOffset(b, h);
    float* head_probs = buf.probs + g.ProbsOffset(b, h);
    HeadScores(buf.q + head, buf.k + head, g, SoftmaxScale(g), dtype, scores.data());
    MaskedSoftmaxRows(scores.data(), KeyBiasRow(key_mask, b, g.seq), g.seq, head_probs);
    DroppedProbs(head_probs, pair, dtype, block, &dropout, dropped.data());
    // context_h[S, d] = dropped[S, S] * v_h[S, d], accumulated in fp32.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g.seq, g.head_dim, g.seq, 1.0f,
                dropped.data(), g.seq, buf.v + head, g.hidden, 0.0f, buf.context + head, g.hidden);
  }
}

// The f32 views one attention backward reads and writes (the caller owns the tensors).
struct BackwardBuffers {
  const float* q;
  const float* k;
  const float* v;
  const float* probs;
  const float* d_context;
  float* dq;
  float* dk;
  float* dv;
};

// Backward of heads [begin, end) of the flat (batch, head) index.
void BackwardHeads(const AttentionGeometry& g, DType dtype, float dropout_p,
                   const DropoutKey& dropout_key, int64_t dropout_stride,
                   const BackwardBuffers& buf, int64_t begin, int64_t end) {
  const float scale = SoftmaxScale(g);
  const int64_t block = g.seq * g.seq;
  std::vector<float> dropped(static_cast<size_t>(block)), d_scores(static_cast<size_t>(block));
  HeadDropout dropout(dropout_p, dropout_key, g.seq, dropout_stride);
  for (int64_t pair = begin; pair < end; ++pair) {
    const int64_t b = pair / g.heads, h = pair % g.heads;
    const int64_t head = g.HeadOffset(b, h);
    const float* head_probs = buf.probs + g.ProbsOffset(b, h);
    const float* dctx_head = buf.d_context + head;
    DroppedProbs(head_probs, pair, dtype, block, &dropout, dropped.data());
    // d_dropped[S, S] = d_context_h * v_h^T (a GEMM output: rounded to q's dtype).
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, g.seq, g.seq, g.head_dim, 1.0f, dctx_head,
                g.hidden, buf.v + head, g.hidden, 0.0f, d_scores.data(), g.seq);
    RoundAll(dtype, block, d_scores.data());
    // dv_h[S, d] = dropped^T * d_context_h.
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, g.seq, g.head_dim, g.seq, 1.0f,
                dropped.data(), g.seq, dctx_head, g.hidden, 0.0f, buf.dv + head, g.hidden);
    // Through dropout and softmax (fp32), then back into the scores' dtype and the scale.
    dropout.ApplyInPlace(pair, d_scores.data());
    SoftmaxBackwardRows(head_probs, g.seq, d_scores.data());
    for (float& d : d_scores) d = StoredAs(dtype, StoredAs(dtype, d) * scale);
    // dq_h = d_scores * k_h;  dk_h = d_scores^T * q_h.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, g.seq, g.head_dim, g.seq, 1.0f,
                d_scores.data(), g.seq, buf.k + head, g.hidden, 0.0f, buf.dq + head, g.hidden);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, g.seq, g.head_dim, g.seq, 1.0f,
                d_scores.data(), g.seq, buf.q + head, g.hidden, 0.0f, buf.dk + head, g.hidden);
  }
}

}  // namespace

void AttentionForward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_mask,
                      int num_heads, float dropout_p, const DropoutKey& dropout_key,
                      int64_t dropout_stride, Tensor* context, Tensor* probs) {
  const AttentionGeometry g = AttentionGeometryOf(q, num_heads);
  const DType dtype = q.dtype();
  *probs = Tensor::Zeros({g.batch, g.heads, g.seq, g.seq}, DType::kF32, Device::kCpu,
                         MemoryCategory::kActivations);
  Tensor context32 = F32Result(q.shape(), dtype);
  const Tensor q32 = AsF32(q), k32 = AsF32(k), v32 = AsF32(v);
  const ForwardBuffers buffers{q32.data<float>(), k32.data<float>(), v32.data<float>(),
                               probs->data<float>(), context32.data<float>()};
  ForEachHeadRange(g, [&](int64_t begin, int64_t end) {
    ForwardHeads(g, dtype, key_mask, dropout_p, dropout_key, dropout_stride, buffers, begin, end);
  });
  *context = RoundToDType(context32, dtype);
}

void AttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k, const Tensor& v,
                       const Tensor& probs, int num_heads, float dropout_p,
                       const DropoutKey& dropout_key, int64_t dropout_stride, Tensor* dq,
                       Tensor* dk, Tensor* dv) {
  const AttentionGeometry g = AttentionGeometryOf(q, num_heads);
  const DType dtype = q.dtype();
  Tensor dq32 = F32Result(q.shape(), dtype), dk32 = F32Result(q.shape(), dtype),
         dv32 = F32Result(q.shape(), dtype);
  const Tensor q32 = AsF32(q), k32 = AsF32(k), v32 = AsF32(v), dctx32 = AsF32(d_context);
  const BackwardBuffers buffers{q32.data<float>(),  k32.data<float>(),    v32.data<float>(),
                                probs.data<float>(), dctx32.data<float>(), dq32.data<float>(),
                                dk32.data<float>(),  dv32.data<float>()};
  ForEachHeadRange(g, [&](int64_t begin, int64_t end) {
    BackwardHeads(g, dtype, dropout_p, dropout_key, dropout_stride, buffers, begin, end);
  });
  *dq = RoundToDType(dq32, dtype);
  *dk = RoundToDType(dk32, dtype);
  *dv = RoundToDType(dv32, dtype);
}

}  // namespace xlmr::kernels::cpu
