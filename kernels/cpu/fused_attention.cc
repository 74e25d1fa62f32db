#include "kernels/cpu/fused_attention.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "framework/tensor/half.h"
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

// The operands every tile of one call reads, as f32 views, and what is constant across tiles.
struct Operands {
  AttentionGeometry g;
  DType dtype;  // q's: where the contract rounds to dt
  const float* q;
  const float* k;
  const float* v;
  const KeyBiases* keys;
  float softmax_scale;    // 1/sqrt(head_dim)
  float dropout_p;
  float dropout_scale;
  DropoutKey dropout_key;
  int64_t query_tile = kQueryTile;

  int64_t QueryTiles() const { return (g.seq + query_tile - 1) / query_tile; }
};

// One (batch, head) pair's place in the tensors.
struct Head {
  int64_t b, h;
  int64_t offset;      // of its first column in [B,S,H]
  int64_t rows_first;  // of its first row in [B,heads,S] (logsumexp) and in the mask's index
};

Head HeadOf(const Operands& op, int64_t pair) {
  const int64_t b = pair / op.g.heads, h = pair % op.g.heads;
  return {b, h, op.g.HeadOffset(b, h), pair * op.g.seq};
}

// A rows x cols tile: query rows [i0, i0 + rows), key columns [j0, j0 + cols).
struct Tile {
  int64_t i0, rows, j0, cols;
};

// scores[r, c] = fp32(q_{i0+r} . k_{j0+c}) * softmax_scale + key_bias (row-major, ld cols).
void TileScores(const Operands& op, const Head& head, const Tile& t, float* scores) {
  const int64_t hidden = op.g.hidden;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, t.rows, t.cols, op.g.head_dim, 1.0f,
              op.q + head.offset + t.i0 * hidden, hidden, op.k + head.offset + t.j0 * hidden,
              hidden, 0.0f, scores, t.cols);
  if (op.keys->all_padding[head.b]) {
    std::fill(scores, scores + t.rows * t.cols, 0.0f);
    return;
  }
  const float* bias = op.keys->bias.data() + head.b * op.g.seq + t.j0;
  for (int64_t r = 0; r < t.rows; ++r) {
    float* row = scores + r * t.cols;
    for (int64_t c = 0; c < t.cols; ++c) row[c] = row[c] * op.softmax_scale + bias[c];
  }
}

// The dropout uniforms of row r of the tile (mask element index = row * S + key).
void TileRowUniforms(const Operands& op, const Head& head, const Tile& t, int64_t r, float* out) {
  DropoutUniformsVectorized(op.dropout_key, (head.rows_first + t.i0 + r) * op.g.seq + t.j0, t.cols,
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
  float* acc = st.acc.data() + r * op.g.head_dim;
  for (int64_t d = 0; d < op.g.head_dim; ++d) acc[d] *= alpha;
  if (op.dropout_p > 0.0f) {
    TileRowUniforms(op, head, t, r, st.uniforms.data());
    for (int64_t c = 0; c < t.cols; ++c) {
      if (st.uniforms[c] < op.dropout_p) row[c] = 0.0f;
    }
  }
  for (int64_t c = 0; c < t.cols; ++c) row[c] = StoredAs(op.dtype, row[c]);
}

// Forward of query tile `query_tile_index` of head `pair`: context rows and their logsumexp.
void ForwardQueryTile(const Operands& op, int64_t pair, int64_t query_tile_index,
                      ForwardTileState& st, float* context, float* logsumexp) {
  const Head head = HeadOf(op, pair);
  const int64_t i0 = query_tile_index * op.query_tile;
  const int64_t rows = std::min(op.query_tile, op.g.seq - i0);
  const int64_t hidden = op.g.hidden, head_dim = op.g.head_dim;
  st.Reset();
  for (int64_t j0 = 0; j0 < op.g.seq; j0 += kKeyTile) {
    const Tile t{i0, rows, j0, std::min(kKeyTile, op.g.seq - j0)};
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
    const int64_t at = head.offset + (i0 + r) * op.g.hidden;
    float dot = 0.0f;
    for (int64_t d = 0; d < op.g.head_dim; ++d) dot += buf.d_context[at + d] * buf.context[at + d];
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
  const int64_t hidden = op.g.hidden, head_dim = op.g.head_dim;
  for (int64_t i0 = 0; i0 < op.g.seq; i0 += op.query_tile) {
    const int64_t rows = std::min(op.query_tile, op.g.seq - i0);
    const int64_t q_rows = head.offset + i0 * hidden;
    RowDots(op, head, buf, i0, rows, s.row_dot.data());
    for (int64_t j0 = 0; j0 < op.g.seq; j0 += kKeyTile) {
      const Tile t{i0, rows, j0, std::min(kKeyTile, op.g.seq - j0)};
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
  for (int64_t i = 0; i < op.g.seq; ++i) {
    float* dq = buf.dq + head.offset + i * hidden;
    float* dk = buf.dk + head.offset + i * hidden;
    for (int64_t d = 0; d < head_dim; ++d) {
      dq[d] *= op.softmax_scale;
      dk[d] *= op.softmax_scale;
    }
  }
}

Operands MakeOperands(const Tensor& q32, const Tensor& k32, const Tensor& v32, DType dtype,
                      const KeyBiases& keys, int num_heads, float dropout_p,
                      const DropoutKey& dropout_key) {
  const AttentionGeometry g = AttentionGeometryOf(q32, num_heads);
  return Operands{g,
                  dtype,
                  q32.data<float>(),
                  k32.data<float>(),
                  v32.data<float>(),
                  &keys,
                  static_cast<float>(1.0 / std::sqrt(static_cast<double>(g.head_dim))),
                  dropout_p,
                  DropoutScale(dropout_p),
                  dropout_key};
}

}  // namespace

void FusedAttentionForward(const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& key_mask, int num_heads, float dropout_p,
                           const DropoutKey& dropout_key, Tensor* context, Tensor* logsumexp) {
  const DType dtype = q.dtype();
  const Tensor q32 = AsF32(q), k32 = AsF32(k), v32 = AsF32(v);
  const KeyBiases keys = KeyBiasesOf(key_mask);
  const Operands op =
      MakeOperands(q32, k32, v32, dtype, keys, num_heads, dropout_p, dropout_key);
  // Every row of every head is written by its query tile.
  Tensor context32 = F32Output(q.shape(), dtype);
  *logsumexp = Tensor::Empty({op.g.batch, op.g.heads, op.g.seq}, DType::kF32, Device::kCpu,
                             MemoryCategory::kActivations);
  float* context_out = context32.data<float>();
  float* lse_out = logsumexp->data<float>();
  const int64_t query_tiles = op.QueryTiles();
  // (batch, head, query tile) triples are independent: each writes its own rows.
  ParallelFor(op.g.batch * op.g.heads * query_tiles, 1, [&](int64_t begin, int64_t end) {
    ForwardTileState state(op.query_tile, op.g.head_dim);
    for (int64_t item = begin; item < end; ++item) {
      ForwardQueryTile(op, item / query_tiles, item % query_tiles, state, context_out, lse_out);
    }
  });
  *context = RoundToDType(context32, dtype);
}

void FusedAttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k,
                            const Tensor& v, const Tensor& context, const Tensor& logsumexp,
                            const Tensor& key_mask, int num_heads, float dropout_p,
                            const DropoutKey& dropout_key, Tensor* dq, Tensor* dk, Tensor* dv) {
  const DType dtype = q.dtype();
  const Tensor q32 = AsF32(q), k32 = AsF32(k), v32 = AsF32(v);
  const Tensor context32 = AsF32(context), dcontext32 = AsF32(d_context);
  const KeyBiases keys = KeyBiasesOf(key_mask);
  const Operands op =
      MakeOperands(q32, k32, v32, dtype, keys, num_heads, dropout_p, dropout_key);
  Tensor dq32 = F32Result(q.shape(), dtype), dk32 = F32Result(q.shape(), dtype),
         dv32 = F32Result(q.shape(), dtype);
  const BackwardBuffers buffers{context32.data<float>(), dcontext32.data<float>(),
                                logsumexp.data<float>(), dq32.data<float>(),
                                dk32.data<float>(),      dv32.data<float>()};
  // (batch, head) pairs are independent: each accumulates only its own columns.
  ParallelFor(op.g.batch * op.g.heads, 1, [&](int64_t begin, int64_t end) {
    BackwardScratch scratch(op.query_tile);
    for (int64_t pair = begin; pair < end; ++pair) BackwardHead(op, buffers, pair, scratch);
  });
  *dq = RoundToDType(dq32, dtype);
  *dk = RoundToDType(dk32, dtype);
  *dv = RoundToDType(dv32, dtype);
}

}  // namespace xlmr::kernels::cpu
