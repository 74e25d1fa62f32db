#include "kernels/cpu/fused_attention.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "framework/tensor/half.h"
#include "framework/core/check.h"
#include "kernels/common/attention_dropout_index.h"
#include "kernels/common/attention_geometry.h"
#include "kernels/common/dropout_scale.h"
#include "kernels/common/fused_attention_tiles.h"
#include "kernels/cpu/dropout_uniforms.h"
#include "kernels/cpu/float_access.h"
#include "kernels/cpu/parallel.h"

namespace xlmr::kernels::cpu {
namespace {

constexpr int64_t kKeyTile = kFusedAttentionKeyTile;
// Query rows per tile. The tiles run on the CPU threads, each tile GEMM on its calling thread
// (OpenBLAS is single-threaded, parallel.h).
constexpr int64_t kQueryTile = 64;

// exp(z) in fp32 is exactly 0 for every z below this (e^-104 < 2^-150, half the smallest
// denormal): padding keys (scores near finfo.min) skip libm's slow underflow path.
constexpr float kExpUnderflow = -104.0f;

float ExpOrZero(float z) { return z < kExpUnderflow ? 0.0f : std::exp(z); }

// Additive key bias [B,S]: 0 for real tokens, kPaddingKeyBias for padding; and, per batch row,
// whether all its keys are padding (then its scores are all finfo.min, q.k absorbed, and the
// kernels use the equal scores 0 instead: the same uniform softmax, with a logsumexp of log(S)
// that survives fp32, where finfo.min + log(S) would round back to finfo.min).
struct KeyBiases {
  std::vector<float> bias;
  std::vector<char> all_padding;
};

KeyBiases KeyBiasesOf(const Tensor& key_mask) {
  const int64_t batch = key_mask.dim(0), seq = key_mask.dim(1);
  const int32_t* mask = key_mask.data<int32_t>();
  KeyBiases out{std::vector<float>(static_cast<size_t>(batch * seq)),
                std::vector<char>(static_cast<size_t>(batch), 1)};
  for (int64_t i = 0; i < batch * seq; ++i) {
    out.bias[i] = mask[i] != 0 ? 0.0f : kPaddingKeyBias;
    if (mask[i] != 0) out.all_padding[i / seq] = 0;
  }
  return out;
}

// Where each sequence of one call lies: the padded form's sequence b is rows [b S, b S + S) of
// [B, S, H] with a key mask; the packed (varlen) form's is rows [cu[b], cu[b+1]) of [T, H], all
// real. The logsumexp of (b, h, i) is at first_row[b] * stat_token_stride + h * stat_head_stride
// + i: [B, heads, S] for the padded form (strides heads and S), [heads, T] for the packed one
// (strides 1 and T).
struct SequenceLayout {
  std::vector<int64_t> first_row;  // per sequence
  std::vector<int64_t> length;     // per sequence
  int64_t max_length = 0;
  int64_t stat_token_stride = 0;
  int64_t stat_head_stride = 0;
  const KeyBiases* keys = nullptr;  // padded form only (null: every key is real)
};

SequenceLayout PaddedLayout(int64_t batch, int64_t seq, int64_t heads, const KeyBiases* keys) {
  SequenceLayout layout;
  for (int64_t b = 0; b < batch; ++b) {
    layout.first_row.push_back(b * seq);
    layout.length.push_back(seq);
  }
  layout.max_length = seq;
  layout.stat_token_stride = heads;
  layout.stat_head_stride = seq;
  layout.keys = keys;
  return layout;
}

SequenceLayout PackedLayout(const Tensor& cu_seqlens, int64_t max_seqlen, int64_t tokens) {
  SequenceLayout layout;
  const int32_t* cu = cu_seqlens.data<int32_t>();
  for (int64_t b = 0; b + 1 < cu_seqlens.numel(); ++b) {
    layout.first_row.push_back(cu[b]);
    layout.length.push_back(int64_t{cu[b + 1]} - cu[b]);
  }
  layout.max_length = max_seqlen;
  layout.stat_token_stride = 1;
  layout.stat_head_stride = tokens;
  return layout;
}

// The operands every tile of one call reads, as f32 views, and what is constant across tiles.
struct Operands {
  const SequenceLayout* layout;
  int64_t heads, head_dim, hidden;
  DType dtype;  // q's: where the contract rounds to dt
  const float* q;
  const float* k;
  const float* v;
  float softmax_scale;    // 1/sqrt(head_dim)
  float dropout_p;
  float dropout_scale;
  DropoutKey dropout_key;
  int64_t dropout_stride;  // kernels/common/attention_dropout_index.h
  int64_t query_tile = kQueryTile;

  int64_t batch() const { return static_cast<int64_t>(layout->first_row.size()); }
  int64_t QueryTiles() const { return (layout->max_length + query_tile - 1) / query_tile; }
};

// One (sequence b, head h) pair's place in the tensors.
struct Head {
  int64_t b, h;
  int64_t pair;        // b * heads + h: the dropout index's
  int64_t offset;      // of its first column in [B,S,H] or [T,H]
  int64_t seq;         // its sequence's length
  int64_t rows_first;  // of its first row in the logsumexp
};

Head HeadOf(const Operands& op, int64_t pair) {
  const int64_t b = pair / op.heads, h = pair % op.heads;
  const SequenceLayout& l = *op.layout;
  return {b,
          h,
          pair,
          l.first_row[b] * op.hidden + h * op.head_dim,
          l.length[b],
          l.first_row[b] * l.stat_token_stride + h * l.stat_head_stride};
}

// A rows x cols tile: query rows [i0, i0 + rows), key columns [j0, j0 + cols).
struct Tile {
  int64_t i0, rows, j0, cols;
};

// scores[r, c] = fp32(q_{i0+r} . k_{j0+c}) * softmax_scale + key_bias (row-major, ld cols).
void TileScores(const Operands& op, const Head& head, const Tile& t, float* scores) {
  const int64_t hidden = op.hidden;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t.rows, t.cols, op.head_dim, 1.0f,
              op.q + head.offset + t.i0 * hidden, hidden, op.k + head.offset + t.j0 * hidden,
              hidden, 0.0f, scores, t.cols);
  const KeyBiases* keys = op.layout->keys;
  if (keys == nullptr) {  // packed: every key of the sequence is real (bias 0)
    for (int64_t i = 0; i < t.rows * t.cols; ++i) scores[i] = scores[i] * op.softmax_scale + 0.0f;
    return;
  }
  if (keys->all_padding[head.b]) {
    std::fill(scores, scores + t.rows * t.cols, 0.0f);
    return;
  }
  const float* bias = keys->bias.data() + head.b * head.seq + t.j0;
  for (int64_t r = 0; r < t.rows; ++r) {
    float* row = scores + r * t.cols;
    for (int64_t c = 0; c < t.cols; ++c) row[c] = row[c] * op.softmax_scale + bias[c];
  }
}

// The dropout uniforms of row r of the tile (kernels/common/attention_dropout_index.h).
void TileRowUniforms(const Operands& op, const Head& head, const Tile& t, int64_t r, float* out) {
  DropoutUniformsVectorized(
      op.dropout_key, AttentionDropoutIndex(head.pair, op.dropout_stride, t.i0 + r, t.j0), t.cols,
      out);
}

// Per-thread state of one query tile's forward: the online softmax's running max and sum per
// row and the unnormalised context accumulator.
struct ForwardTileState {
  std::vector<float> scores, uniforms, running_max, running_sum, acc;

  ForwardTileState(int64_t query_tile, int64_t head_dim)
      : scores(static_cast<size_t>(query_tile * kKeyTile)),
        uniforms(static_cast<size_t>(kKeyTile)),
        running_max(static_cast<size_t>(query_tile)),
        running_sum(static_cast<size_t>(query_tile)),
        acc(static_cast<size_t>(query_tile * head_dim)) {}

  void Reset() {
    std::fill(running_max.begin(), running_max.end(), -std::numeric_limits<float>::infinity());
    std::fill(running_sum.begin(), running_sum.end(), 0.0f);
    std::fill(acc.begin(), acc.end(), 0.0f);
  }
};

// The online-softmax update of one row with one key tile (the contract's per-tile step):
// turns row[] from scores into dt(z ? e : 0), rescales the row's accumulator by alpha.
void UpdateRow(const Operands& op, const Head& head, const Tile& t, int64_t r,
               ForwardTileState& st) {
  float* row = st.scores.data() + r * t.cols;
  const float tile_max = *std::max_element(row, row + t.cols);
  const float new_max = std::max(st.running_max[r], tile_max);
  const float alpha = std::exp(st.running_max[r] - new_max);  // exp(-inf) = 0 on the first tile
  float tile_sum = 0.0f;
  for (int64_t c = 0; c < t.cols; ++c) {
    row[c] = ExpOrZero(row[c] - new_max);
    tile_sum += row[c];
  }
  st.running_sum[r] = st.running_sum[r] * alpha + tile_sum;
  st.running_max[r] = new_max;
  float* acc = st.acc.data() + r * op.head_dim;
  for (int64_t d = 0; d < op.head_dim; ++d) acc[d] *= alpha;
  if (op.dropout_p > 0.0f) {
    TileRowUniforms(op, head, t, r, st.uniforms.data());
    for (int64_t c = 0; c < t.cols; ++c) {
      if (st.uniforms[c] < op.dropout_p) row[c] = 0.0f;
    }
  }
  for (int64_t c = 0; c < t.cols; ++c) row[c] = StoredAs(op.dtype, row[c]);
}

// Forward of query tile `query_tile_index` of head `pair`: context rows and their logsumexp
// (nothing for a tile past its sequence's end, which a shorter packed sequence has).
void ForwardQueryTile(const Operands& op, int64_t pair, int64_t query_tile_index,
                      ForwardTileState& st, float* context, float* logsumexp) {
  const Head head = HeadOf(op, pair);
  const int64_t i0 = query_tile_index * op.query_tile;
  if (i0 >= head.seq) return;
  const int64_t rows = std::min(op.query_tile, head.seq - i0);
  const int64_t hidden = op.hidden, head_dim = op.head_dim;
  st.Reset();
  for (int64_t j0 = 0; j0 < head.seq; j0 += kKeyTile) {
    const Tile t{i0, rows, j0, std::min(kKeyTile, head.seq - j0)};
    TileScores(op, head, t, st.scores.data());
    for (int64_t r = 0; r < rows; ++r) UpdateRow(op, head, t, r, st);
    // acc += dt(P) v_tile, fp32 accumulation.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, head_dim, t.cols, 1.0f,
                st.scores.data(), t.cols, op.v + head.offset + j0 * hidden, hidden, 1.0f,
                st.acc.data(), head_dim);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const float* acc = st.acc.data() + r * head_dim;
    float* out = context + head.offset + (i0 + r) * hidden;
    const float sum = st.running_sum[r];
    for (int64_t d = 0; d < head_dim; ++d) out[d] = (acc[d] / sum) * op.dropout_scale;
    logsumexp[head.rows_first + i0 + r] = st.running_max[r] + std::log(sum);
  }
}

// The f32 views the backward reads and writes besides Operands.
struct BackwardBuffers {
  const float* context;
  const float* d_context;
  const float* logsumexp;
  float* dq;  // accumulated unscaled (sum of dt(dS) k), scaled at the end of the head
  float* dk;
  float* dv;
};

// Per-thread scratch of one head's backward.
struct BackwardScratch {
  std::vector<float> probs, d_probs, dropped, uniforms, row_dot;

  BackwardScratch(int64_t query_tile)
      : probs(static_cast<size_t>(query_tile * kKeyTile)),
        d_probs(static_cast<size_t>(query_tile * kKeyTile)),
        dropped(static_cast<size_t>(query_tile * kKeyTile)),
        uniforms(static_cast<size_t>(kKeyTile)),
        row_dot(static_cast<size_t>(query_tile)) {}
};

// D_r = sum_d dcontext * context for the tile's rows (fp32, in order).
void RowDots(const Operands& op, const Head& head, const BackwardBuffers& buf, int64_t i0,
             int64_t rows, float* row_dot) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t at = head.offset + (i0 + r) * op.hidden;
    float dot = 0.0f;
    for (int64_t d = 0; d < op.head_dim; ++d) dot += buf.d_context[at + d] * buf.context[at + d];
    row_dot[r] = dot;
  }
}

// For one tile, from its recomputed scores (in s.probs) and dcontext v^T (in s.d_probs):
// s.probs <- dt(dS), s.dropped <- dt(z ? P * dropout_scale : 0).
void TileSoftmaxBackward(const Operands& op, const Head& head, const BackwardBuffers& buf,
                         const Tile& t, BackwardScratch& s) {
  for (int64_t r = 0; r < t.rows; ++r) {
    float* scores = s.probs.data() + r * t.cols;
    const float* dpd = s.d_probs.data() + r * t.cols;
    float* dropped = s.dropped.data() + r * t.cols;
    const float lse = buf.logsumexp[head.rows_first + t.i0 + r];
    const bool dropout = op.dropout_p > 0.0f;
    if (dropout) TileRowUniforms(op, head, t, r, s.uniforms.data());
    for (int64_t c = 0; c < t.cols; ++c) {
      const bool kept = !dropout || s.uniforms[c] >= op.dropout_p;
      const float p = ExpOrZero(scores[c] - lse);
      const float dp = kept ? dpd[c] * op.dropout_scale : 0.0f;
      dropped[c] = StoredAs(op.dtype, kept ? p * op.dropout_scale : 0.0f);
      scores[c] = StoredAs(op.dtype, p * (dp - s.row_dot[r]));
    }
  }
}

// Backward of head `pair`: its columns of dq, dk, dv, query tile by query tile, key tile by
// key tile, every sum in that fixed order.
void BackwardHead(const Operands& op, const BackwardBuffers& buf, int64_t pair,
                  BackwardScratch& s) {
  const Head head = HeadOf(op, pair);
  const int64_t hidden = op.hidden, head_dim = op.head_dim;
  for (int64_t i0 = 0; i0 < head.seq; i0 += op.query_tile) {
    const int64_t rows = std::min(op.query_tile, head.seq - i0);
    const int64_t q_rows = head.offset + i0 * hidden;
    RowDots(op, head, buf, i0, rows, s.row_dot.data());
    for (int64_t j0 = 0; j0 < head.seq; j0 += kKeyTile) {
      const Tile t{i0, rows, j0, std::min(kKeyTile, head.seq - j0)};
      const int64_t k_rows = head.offset + j0 * hidden;
      TileScores(op, head, t, s.probs.data());
      // d_probs = dcontext_tile v_tile^T (the gradient of the dropped, scaled probabilities).
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, t.cols, head_dim, 1.0f,
                  buf.d_context + q_rows, hidden, op.v + k_rows, hidden, 0.0f, s.d_probs.data(),
                  t.cols);
      TileSoftmaxBackward(op, head, buf, t, s);
      // dv_tile += dropped^T dcontext;  dq += dS k_tile;  dk_tile += dS^T q.
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, t.cols, head_dim, rows, 1.0f,
                  s.dropped.data(), t.cols, buf.d_context + q_rows, hidden, 1.0f, buf.dv + k_rows,
                  hidden);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, head_dim, t.cols, 1.0f,
                  s.probs.data(), t.cols, op.k + k_rows, hidden, 1.0f, buf.dq + q_rows, hidden);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, t.cols, head_dim, rows, 1.0f,
                  s.probs.data(), t.cols, op.q + q_rows, hidden, 1.0f, buf.dk + k_rows, hidden);
    }
  }
  // The softmax scale, applied once to the fp32 sums (the contract's dq, dk).
  for (int64_t i = 0; i < head.seq; ++i) {
    float* dq = buf.dq + head.offset + i * hidden;
    float* dk = buf.dk + head.offset + i * hidden;
    for (int64_t d = 0; d < head_dim; ++d) {
      dq[d] *= op.softmax_scale;
      dk[d] *= op.softmax_scale;
    }
  }
}

Operands MakeOperands(const Tensor& q32, const Tensor& k32, const Tensor& v32, DType dtype,
                      const SequenceLayout& layout, int num_heads, float dropout_p,
                      const DropoutKey& dropout_key, int64_t dropout_stride) {
  const int64_t hidden = q32.dim(q32.rank() - 1), head_dim = hidden / num_heads;
  const int64_t batch = static_cast<int64_t>(layout.first_row.size());
  if (dropout_p > 0.0f) {
    XLMR_CHECK(layout.max_length <= dropout_stride &&
               AttentionDropoutElements(batch, num_heads, dropout_stride) <= kMaxDropoutElements)
        << "fused attention dropout: stride " << dropout_stride << " for sequences of up to "
        << layout.max_length << " tokens, " << batch << " x " << num_heads << " heads";
  }
  return Operands{&layout,
                  num_heads,
                  head_dim,
                  hidden,
                  dtype,
                  q32.data<float>(),
                  k32.data<float>(),
                  v32.data<float>(),
                  static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim))),
                  dropout_p,
                  DropoutScale(dropout_p),
                  dropout_key,
                  dropout_stride};
}

// The forward of either form: context (q's shape) and logsumexp (`lse_shape`, every row of
// every sequence written by its query tile; a packed call's rows all belong to a sequence).
void Forward(const Tensor& q, const Tensor& k, const Tensor& v, const SequenceLayout& layout,
             const Shape& lse_shape, int num_heads, float dropout_p, const DropoutKey& dropout_key,
             int64_t dropout_stride, Tensor* context, Tensor* logsumexp) {
  const DType dtype = q.dtype();
  const Tensor q32 = AsF32(q), k32 = AsF32(k), v32 = AsF32(v);
  const Operands op =
      MakeOperands(q32, k32, v32, dtype, layout, num_heads, dropout_p, dropout_key, dropout_stride);
  Tensor context32 = F32Output(q.shape(), dtype);
  *logsumexp = Tensor::Empty(lse_shape, DType::kF32, Device::kCpu, MemoryCategory::kActivations);
  float* context_out = context32.data<float>();
  float* lse_out = logsumexp->data<float>();
  const int64_t query_tiles = op.QueryTiles();
  // (sequence, head, query tile) triples are independent: each writes its own rows.
  ParallelFor(op.batch() * op.heads * query_tiles, 1, [&](int64_t begin, int64_t end) {
    ForwardTileState state(op.query_tile, op.head_dim);
    for (int64_t item = begin; item < end; ++item) {
      ForwardQueryTile(op, item / query_tiles, item % query_tiles, state, context_out, lse_out);
    }
  });
  *context = RoundToDType(context32, dtype);
}

// The backward of either form.
void Backward(const Tensor& d_context, const Tensor& q, const Tensor& k, const Tensor& v,
              const Tensor& context, const Tensor& logsumexp, const SequenceLayout& layout,
              int num_heads, float dropout_p, const DropoutKey& dropout_key,
              int64_t dropout_stride, Tensor* dq, Tensor* dk, Tensor* dv) {
  const DType dtype = q.dtype();
  const Tensor q32 = AsF32(q), k32 = AsF32(k), v32 = AsF32(v);
  const Tensor context32 = AsF32(context), dcontext32 = AsF32(d_context);
  const Operands op =
      MakeOperands(q32, k32, v32, dtype, layout, num_heads, dropout_p, dropout_key, dropout_stride);
  // Zeroed: a packed call's rows all belong to a sequence, but a padded one's are all written
  // by accumulation.
  Tensor dq32 = F32Result(q.shape(), dtype), dk32 = F32Result(q.shape(), dtype),
         dv32 = F32Result(q.shape(), dtype);
  const BackwardBuffers buffers{context32.data<float>(), dcontext32.data<float>(),
                                logsumexp.data<float>(), dq32.data<float>(),
                                dk32.data<float>(),      dv32.data<float>()};
  // (sequence, head) pairs are independent: each accumulates only its own rows and columns.
  ParallelFor(op.batch() * op.heads, 1, [&](int64_t begin, int64_t end) {
    BackwardScratch scratch(op.query_tile);
    for (int64_t pair = begin; pair < end; ++pair) BackwardHead(op, buffers, pair, scratch);
  });
  *dq = RoundToDType(dq32, dtype);
  *dk = RoundToDType(dk32, dtype);
  *dv = RoundToDType(dv32, dtype);
}

}  // namespace

void FusedAttentionForward(const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& key_mask, int num_heads, float dropout_p,
                           const DropoutKey& dropout_key, int64_t dropout_stride, Tensor* context,
                           Tensor* logsumexp) {
  const KeyBiases keys = KeyBiasesOf(key_mask);
  const int64_t batch = q.dim(0), seq = q.dim(1);
  const SequenceLayout layout = PaddedLayout(batch, seq, num_heads, &keys);
  Forward(q, k, v, layout, {batch, num_heads, seq}, num_heads, dropout_p, dropout_key,
          dropout_stride, context, logsumexp);
}

void FusedAttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k,
                            const Tensor& v, const Tensor& context, const Tensor& logsumexp,
                            const Tensor& key_mask, int num_heads, float dropout_p,
                            const DropoutKey& dropout_key, int64_t dropout_stride, Tensor* dq,
                            Tensor* dk, Tensor* dv) {
  const KeyBiases keys = KeyBiasesOf(key_mask);
  const SequenceLayout layout = PaddedLayout(q.dim(0), q.dim(1), num_heads, &keys);
  Backward(d_context, q, k, v, context, logsumexp, layout, num_heads, dropout_p, dropout_key,
           dropout_stride, dq, dk, dv);
}

void VarlenFusedAttentionForward(const Tensor& q, const Tensor& k, const Tensor& v,
                                 const Tensor& cu_seqlens, int64_t max_seqlen, int num_heads,
                                 float dropout_p, const DropoutKey& dropout_key,
                                 int64_t dropout_stride, Tensor* context, Tensor* logsumexp) {
  const int64_t tokens = q.dim(0);
  const SequenceLayout layout = PackedLayout(cu_seqlens, max_seqlen, tokens);
  Forward(q, k, v, layout, {num_heads, tokens}, num_heads, dropout_p, dropout_key,
          dropout_stride, context, logsumexp);
}

void VarlenFusedAttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k,
                                  const Tensor& v, const Tensor& context, const Tensor& logsumexp,
                                  const Tensor& cu_seqlens, int64_t max_seqlen, int num_heads,
                                  float dropout_p, const DropoutKey& dropout_key,
                                  int64_t dropout_stride, Tensor* dq, Tensor* dk, Tensor* dv) {
  const SequenceLayout layout = PackedLayout(cu_seqlens, max_seqlen, q.dim(0));
  Backward(d_context, q, k, v, context, logsumexp, layout, num_heads, dropout_p, dropout_key,
           dropout_stride, dq, dk, dv);
}

}  // namespace xlmr::kernels::cpu
