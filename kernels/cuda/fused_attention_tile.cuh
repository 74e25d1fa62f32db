// What every fused attention kernel (kernels/cuda/fused_attention_{f16,f32}.cuh) shares: the
// problem's geometry as kernels see it, the (query tile x key tile) decomposition, the key bias,
// and the dropout decisions of one 64 x 64 tile, bit for bit those of framework/random/philox.h.
//
// Geometry, padded form: q, k, v, the context and their gradients are [B, S, H] with
// H = heads * 64; the (batch b, head h) pair bh = b * heads + h owns columns [64 h, 64 h + 64) of
// sequence b, a [S, 64] matrix with row stride H. The logsumexp and D are [B, heads, S] =
// [bh][i]. Packed (varlen) form: [T, H], sequence b is rows [cu[b], cu[b+1]), all real tokens;
// the logsumexp and D are [heads, T]. Every CTA takes one pair (blockIdx.x: B * heads may exceed
// the 65535 of gridDim.y) and one 64-row tile of queries or keys (blockIdx.y; packed: tiles of
// the longest sequence, a CTA past its own sequence's end returns at once), and first narrows the
// problem to its pair (FusedAttentionProblem::ForPair), after which both forms read alike.
//
// Device-side header: include it only from .cu files of kernels/cuda.
#ifndef XLMR_KERNELS_CUDA_FUSED_ATTENTION_TILE_CUH_
#define XLMR_KERNELS_CUDA_FUSED_ATTENTION_TILE_CUH_

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kernels/common/attention_dropout_index.h"
#include "kernels/common/attention_geometry.h"
#include "kernels/common/fused_attention_tiles.h"
#include "kernels/cuda/philox_device.cuh"

namespace xlmr::kernels::cuda {

// The head size and the tile edge (queries and keys alike). The key tile is the contract's
// kFusedAttentionKeyTile: its boundaries are where the running maximum may change, so they
// fix the f16 roundings of the unnormalised probabilities.
inline constexpr int kHead = 64;
inline constexpr int kTile = 64;
static_assert(kTile == kFusedAttentionKeyTile, "the CUDA key tile must be the contract's");

// Attention dropout as the kernels apply it (p == 0: everything kept, no Philox call).
struct FusedDropout {
  float p = 0.0f;
  float keep_scale = 1.0f;  // DropoutScale(p)
  DropoutSite site{};
  __host__ __device__ __forceinline__ bool on() const { return p > 0.0f; }
};

struct FusedAttentionProblem {
  int64_t seq;     // padded: S; packed: the longest sequence; after ForPair: the pair's length
  int64_t hidden;  // H: the row stride of every [B, S, H] or [T, H] tensor
  int heads;
  float softmax_scale;        // 1 / sqrt(64) = 0.125 exactly
  const int32_t* key_mask;    // padded: [B, S], nonzero = real token; packed: null
  const int32_t* cu_seqlens;  // packed: [B + 1] on the device; padded: null
  int64_t tokens;             // packed: T; padded: unused
  int64_t dropout_stride;     // kernels/common/attention_dropout_index.h
  FusedDropout dropout;
  // The 16-bit backward's keep table (null elsewhere): the dK/dV kernel stores each tile's keep
  // bits there (StoreKeepBits) and the dQ kernel, launched after it, loads them (LoadKeepBits)
  // instead of running Philox over the same elements a third time. keep_table_tiles = the
  // longest sequence's 64-row tiles; the table holds one word per (pair, query row, key tile).
  uint64_t* keep_table = nullptr;
  int64_t keep_table_tiles = 0;
  // Set by ForPair: the pair's first token row ([B, S, H] or [T, H]) and first logsumexp/D row.
  int64_t first_row = 0;
  int64_t stat_first = 0;

  __device__ __forceinline__ int64_t Batch(int bh) const { return bh / heads; }
  // The problem as pair bh sees it: its sequence's length in `seq`, its rows in first_row and
  // stat_first. Every kernel calls it first; the members below assume it.
  __device__ __forceinline__ FusedAttentionProblem ForPair(int bh) const {
    FusedAttentionProblem pair = *this;
    const int64_t b = Batch(bh);
    if (cu_seqlens != nullptr) {
      pair.first_row = cu_seqlens[b];
      pair.seq = int64_t{cu_seqlens[b + 1]} - cu_seqlens[b];
      pair.stat_first = static_cast<int64_t>(bh % heads) * tokens + pair.first_row;
    } else {
      pair.first_row = b * seq;
      pair.stat_first = static_cast<int64_t>(bh) * seq;
    }
    return pair;
  }
  // Offset of element (row 0, column 0) of pair bh's [seq, 64] matrix in q, k, v, ...
  __device__ __forceinline__ int64_t HeadOffset(int bh) const {
    return first_row * hidden + static_cast<int64_t>(bh % heads) * kHead;
  }
  // Offset of pair bh's first query row in the logsumexp and D.
  __device__ __forceinline__ int64_t RowStatOffset(int /*bh*/) const { return stat_first; }
  // The additive bias of key j of pair bh's sequence: 0 for a real token, finfo(f32).min for
  // padding, and -inf for a key past the end (a partial last tile), whose exp is exactly 0 so
  // that it takes no part in the maximum, the sum or any product.
  __device__ __forceinline__ float KeyBias(int bh, int64_t j) const {
    if (j >= seq) return -INFINITY;
    if (key_mask == nullptr) return 0.0f;
    return key_mask[Batch(bh) * seq + j] != 0 ? 0.0f : kPaddingKeyBias;
  }
  // Offset in q, k, v, ... of the row of statistics `row` (a [B, heads, S] or [heads, T] index),
  // for the kernels that go over the rows of D rather than over pairs (no ForPair).
  __device__ __forceinline__ int64_t StatRowOffset(int64_t row) const {
    if (cu_seqlens != nullptr) return (row % tokens) * hidden + (row / tokens) * kHead;
    const int64_t bh = row / seq;
    return (bh / heads) * seq * hidden + (row % seq) * hidden + (bh % heads) * kHead;
  }
};

// How one CTA turns dot products into scores. A sequence without any real token has every
// score equal to finfo.min (q.k is absorbed by the bias), and the contract then uses the equal
// scores s_ij = 0 instead: the same uniform softmax, with a logsumexp of log(S) that fp32 can
// hold (finfo.min + log(S) would round back to finfo.min and break P = exp(s - logsumexp)).
// Keys past the end (bias -inf) stay excluded either way.
struct ScoreRule {
  float softmax_scale;
  bool all_padding;

  // s_ij from the fp32 dot product q_i . k_j and key j's bias: scaled, then the bias added,
  // two separately rounded operations (no FMA contraction), as on the CPU.
  __device__ __forceinline__ float operator()(float dot, float bias) const {
    if (all_padding) return bias == -INFINITY ? -INFINITY : 0.0f;
    return __fadd_rn(__fmul_rn(dot, softmax_scale), bias);
  }
};

// The rule of pair bh's sequence: whether its key mask has a real token, found by the whole CTA
// (every thread must call it; __syncthreads_or is a barrier).
__device__ __forceinline__ ScoreRule ScoreRuleOf(const FusedAttentionProblem& problem, int bh) {
  // Packed: every key is real (and the pair has one, or its CTA returned).
  int real_token = problem.key_mask == nullptr ? 1 : 0;
  const int32_t* mask =
      problem.key_mask == nullptr ? nullptr : problem.key_mask + problem.Batch(bh) * problem.seq;
  for (int64_t j = threadIdx.x; j < problem.seq && real_token == 0; j += blockDim.x) {
    real_token = mask[j] != 0;
  }
  return ScoreRule{problem.softmax_scale, __syncthreads_or(real_token) == 0};
}

// keep[r] bit c (r, c < 64) says whether dropout keeps element (query i0 + r, key j0 + c) of pair
// bh: DropoutUniform(key, AttentionDropoutIndex(bh, dropout_stride, i, j)) >= p, the mask of
// ops::Attention. Rows past the sequence end get no bits (and no Philox calls).
//
// Why a block-wide table: one Philox call gives four consecutive mask elements, and a 64-key row
// segment spans at most 17 Philox blocks; two threads per row (128 threads, 64 rows) split those
// blocks, so each element is generated once per tile (<= 9 calls per thread), whichever way the
// MMA layouts then spread a row over threads. Called by all 128 threads; the caller syncs before
// (the previous tile's readers are done) and after (the table is complete).
__device__ __forceinline__ void FillKeepBits(const FusedAttentionProblem& problem, int bh,
                                             int64_t i0, int64_t j0, uint64_t* keep) {
  static_assert(kTile == 64, "one 64-bit word per row");
  const int row = threadIdx.x / 2;
  const int half = threadIdx.x % 2;
  const int64_t i = i0 + row;
  uint64_t bits = 0;
  if (i < problem.seq) {
    const int64_t first = AttentionDropoutIndex(bh, problem.dropout_stride, i, j0);
    const int64_t keys = problem.seq - j0 < kTile ? problem.seq - j0 : kTile;
    const int64_t end = first + keys;
    for (int64_t block = first / 4 + half; block * 4 < end; block += 2) {
      const uint4 words = DropoutBlockWords(problem.dropout.site, static_cast<uint32_t>(block));
      const uint32_t word[4] = {words.x, words.y, words.z, words.w};
#pragma unroll
      for (int lane = 0; lane < 4; ++lane) {
        const int64_t element = block * 4 + lane;
        if (element >= first && element < end &&
            UniformFromWordDevice(word[lane]) >= problem.dropout.p) {
          bits |= uint64_t{1} << (element - first);
        }
      }
    }
  }
  bits |= __shfl_xor_sync(0xffffffffu, bits, 1);  // the row's other half (adjacent lane)
  if (half == 0) keep[row] = bits;
}

// Where row i's keep word for key tile jt of pair bh sits in problem.keep_table.
__device__ __forceinline__ int64_t KeepTableIndex(const FusedAttentionProblem& problem, int bh, int64_t i,
                                                  int64_t jt) {
  return (static_cast<int64_t>(bh) * problem.keep_table_tiles * kTile + i) * problem.keep_table_tiles + jt;
}

// The tile (query rows i0.., key tile jt) of a filled `keep` into problem.keep_table, by the first
// 64 threads; the caller has synced after FillKeepBits and syncs before `keep` is refilled.
__device__ __forceinline__ void StoreKeepBits(const FusedAttentionProblem& problem, int bh, int64_t i0,
                                              int64_t jt, const uint64_t* keep) {
  if (threadIdx.x < kTile) problem.keep_table[KeepTableIndex(problem, bh, i0 + threadIdx.x, jt)] = keep[threadIdx.x];
}

// FillKeepBits' table for (query rows i0.., key tile jt) read back from problem.keep_table (the
// same bits: StoreKeepBits wrote them), by the first 64 threads; the caller syncs after.
__device__ __forceinline__ void LoadKeepBits(const FusedAttentionProblem& problem, int bh, int64_t i0,
                                             int64_t jt, uint64_t* keep) {
  if (threadIdx.x < kTile) keep[threadIdx.x] = problem.keep_table[KeepTableIndex(problem, bh, i0 + threadIdx.x, jt)];
}

// Row r of the keep table (bit c: key column c kept), all ones without dropout (the table is
// then never filled or read).
__device__ __forceinline__ uint64_t KeepRow(const FusedDropout& dropout, const uint64_t* keep,
                                            int r) {
  return dropout.on() ? keep[r] : ~uint64_t{0};
}
__device__ __forceinline__ bool KeepBit(uint64_t keep_row, int c) {
  return ((keep_row >> c) & 1u) != 0;
}

// The number of 64-row tiles covering `rows` rows.
__host__ __device__ inline int64_t TileCount(int64_t rows) { return (rows + kTile - 1) / kTile; }

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_FUSED_ATTENTION_TILE_CUH_
