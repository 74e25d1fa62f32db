// The 16-bit fused attention kernels, one template for f16 and bf16 (`Half`; tensor cores:
// mma.sync m16n8k16, fp32 accumulation), the numerics of framework/ops/fused_attention.h with
// dt = Half: every rounding the header names goes to Half. Included by
// kernels/cuda/fused_attention.cu only.
//
// Every kernel is one CTA of 4 warps per (pair bh, 64-row tile); each warp owns 16 rows of the
// tile and all 64 columns of every product, so softmax rows never cross warps.
//   Forward    per query tile: Q in registers, K/V tiles streamed (two cp.async stages).
//   dK/dV      per key tile:   K, V resident in shared memory, Q/dO tiles streamed; each warp
//                              computes its 16 keys' S^T = K Q^T, dV += P^T dO, dP^T = V dO^T,
//                              dK += dS^T Q.
//   dQ         per query tile: Q, dO in registers, K/V tiles streamed; S = Q K^T, dP = dO V^T,
//                              dQ += dS K.
// Splitting dQ from dK/dV recomputes S and dP once more (7 tile GEMMs instead of 5) but lets
// each CTA own its outputs: no atomics, so the gradients are bit-identical run to run. The
// dropout mask is not generated a third time: the dK/dV kernel stores each tile's keep bits in a
// table that the dQ kernel, launched after it, reads (FusedAttentionProblem::keep_table).
//
// Shared memory: forward and dQ 4 tiles (2 stages x {K, V}; Q and dO are first staged in stage
// 1) = 36 KiB + 1 KiB of bias/keep tables; dK/dV 6 tiles (K, V, 2 stages x {Q, dO}) = 54 KiB +
// 1.5 KiB of tables (dynamic shared memory above the 48 KiB default).
#ifndef XLMR_KERNELS_CUDA_FUSED_ATTENTION_HALF_CUH_
#define XLMR_KERNELS_CUDA_FUSED_ATTENTION_HALF_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kernels/cuda/fused_attention_tile.cuh"
#include "kernels/cuda/mma_fragments.cuh"

namespace xlmr::kernels::cuda {
namespace fused_half {

static_assert(mma::kTileRows == kTile && mma::kTileCols == kHead, "one tile = one head tile");

// ---- small pieces shared by the three kernels ----

__device__ __forceinline__ float QuadMax(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float QuadSum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// The first of the warp's 16 rows in a tile, and the tile rows of the thread's accumulator
// halves (r = 0: c[.][0..1], r = 1: c[.][2..3]).
__device__ __forceinline__ int WarpRow0() { return (threadIdx.x / 32) * 16; }
__device__ __forceinline__ int ThreadRow(int r) { return WarpRow0() + mma::AccumRow(2 * r); }

// bias[c] = KeyBias of key j0 + c, by the first 64 threads.
__device__ __forceinline__ void StoreKeyBias(const FusedAttentionProblem& problem, int bh,
                                             int64_t j0, float* bias) {
  if (threadIdx.x < kTile) bias[threadIdx.x] = problem.KeyBias(bh, j0 + threadIdx.x);
}

// lse[c], dsum[c] of query i0 + c, by the first 64 threads. A query past the end gets lse = +inf
// (so P = exp(s - lse) = 0) and D = 0: its row adds nothing to dK or dV.
__device__ __forceinline__ void StoreRowStats(const FusedAttentionProblem& problem, int bh,
                                              int64_t i0, const float* logsumexp,
                                              const float* row_dot, float* lse, float* dsum) {
  if (threadIdx.x < kTile) {
    const int64_t i = i0 + threadIdx.x;
    const bool in_range = i < problem.seq;
    lse[threadIdx.x] = in_range ? logsumexp[problem.RowStatOffset(bh) + i] : INFINITY;
    dsum[threadIdx.x] = in_range ? row_dot[problem.RowStatOffset(bh) + i] : 0.0f;
  }
}

// Bit 4 nt + e: whether accumulator element c[nt][e] (rows = queries of the tile, columns =
// keys) is kept, from the keep table rows of the thread's two rows.
__device__ __forceinline__ uint32_t KeptElementsRowsAreQueries(const FusedDropout& dropout,
                                                               const uint64_t* keep) {
  const uint64_t rows[2] = {KeepRow(dropout, keep, ThreadRow(0)),
                            KeepRow(dropout, keep, ThreadRow(1))};
  uint32_t kept = 0;
#pragma unroll
  for (int nt = 0; nt < mma::kNTiles; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if (KeepBit(rows[e >> 1], mma::AccumCol(nt, e))) kept |= 1u << (4 * nt + e);
    }
  }
  return kept;
}

// The same for a transposed accumulator (rows = keys of the tile, columns = queries).
__device__ __forceinline__ uint32_t KeptElementsRowsAreKeys(const FusedDropout& dropout,
                                                            const uint64_t* keep) {
  uint32_t kept = 0;
#pragma unroll
  for (int nt = 0; nt < mma::kNTiles; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const uint64_t query_row = KeepRow(dropout, keep, mma::AccumCol(nt, e));
      if (KeepBit(query_row, ThreadRow(e >> 1))) kept |= 1u << (4 * nt + e);
    }
  }
  return kept;
}

__device__ __forceinline__ bool IsKept(uint32_t kept, int nt, int e) {
  return ((kept >> (4 * nt + e)) & 1u) != 0;
}

// The stored value of a fp32 result in Half for row `i` of pair bh's [S, 64] matrix in `out`
// (columns of the thread's accumulator half r), each element times `factor` first.
template <typename Half>
__device__ __forceinline__ void StoreRowHalf(const mma::Accum& c, int r, float factor, Half* row_out) {
#pragma unroll
  for (int nt = 0; nt < mma::kNTiles; ++nt) {
    const float low = __fmul_rn(c[nt][2 * r], factor);
    const float high = __fmul_rn(c[nt][2 * r + 1], factor);
    *reinterpret_cast<uint32_t*>(row_out + mma::AccumCol(nt, 2 * r)) = mma::PackHalves<Half>(low, high);
  }
}

// ---- forward ----

template <typename Half>
struct __align__(16) StreamShared {
  Half tiles[4][mma::kTileHalves];  // stage s: tiles[2 s], tiles[2 s + 1]
  float key_bias[2][kTile];           // per stage
  uint64_t keep[kTile];
};

// Queues key tile `jt` of K and V (or of the two given [S, 64] matrices) into stage `stage`.
template <typename Half>
__device__ __forceinline__ void IssueKeyTile(const FusedAttentionProblem& problem, int bh,
                                             const Half* k_head, const Half* v_head,
                                             int64_t jt, int stage, StreamShared<Half>& shared) {
  const int64_t j0 = jt * kTile;
  mma::LoadTileAsync(shared.tiles[2 * stage], k_head, problem.hidden, j0, problem.seq);
  mma::LoadTileAsync(shared.tiles[2 * stage + 1], v_head, problem.hidden, j0, problem.seq);
  StoreKeyBias(problem, bh, j0, shared.key_bias[stage]);
}

// The step of a query tile's loop over key tiles that both the forward and the dQ kernel take:
// waits until key tile jt has landed and every warp is done with tile jt - 1 (whose stage is
// refilled next), queues tile jt + 1, and fills the tile's dropout keep bits. Returns the stage
// holding tile jt.
template <typename Half>
__device__ __forceinline__ int BeginKeyTile(const FusedAttentionProblem& problem, int bh,
                                            const Half* k_head, const Half* v_head, int64_t i0,
                                            int64_t jt, int64_t key_tiles, StreamShared<Half>& shared) {
  const int stage = static_cast<int>(jt & 1);
  mma::WaitCopies();
  __syncthreads();
  if (jt + 1 < key_tiles) {
    IssueKeyTile(problem, bh, k_head, v_head, jt + 1, stage ^ 1, shared);
    mma::CommitCopies();
  }
  if (problem.dropout.on()) {
    // dQ reads what the dK/dV kernel stored; the forward (no table) generates the bits.
    if (problem.keep_table != nullptr) {
      LoadKeepBits(problem, bh, i0, jt, shared.keep);
    } else {
      FillKeepBits(problem, bh, i0, jt * kTile, shared.keep);
    }
    __syncthreads();
  }
  return stage;
}

// The online softmax of one key tile for the warp's 16 rows: turns the raw dot products in s
// into e_ij = exp(s_ij - m_new) (in place), updates the running maximum m and sum l, and
// rescales the context accumulator o by alpha = exp(m - m_new).
__device__ __forceinline__ void OnlineSoftmaxTile(const ScoreRule& score, const float* key_bias,
                                                  mma::Accum& s,
                                                  float (&m)[2], float (&l)[2], mma::Accum& o) {
  float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int nt = 0; nt < mma::kNTiles; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      s[nt][e] = score(s[nt][e], key_bias[mma::AccumCol(nt, e)]);
      tile_max[e >> 1] = fmaxf(tile_max[e >> 1], s[nt][e]);
    }
  }
  float m_new[2], alpha[2], tile_sum[2] = {0.0f, 0.0f};
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    // The tile has at least one key < S (finite score), so m_new is finite and alpha = 0 when
    // m is still -inf.
    m_new[r] = fmaxf(m[r], QuadMax(tile_max[r]));
    alpha[r] = expf(m[r] - m_new[r]);
  }
#pragma unroll
  for (int nt = 0; nt < mma::kNTiles; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      s[nt][e] = expf(s[nt][e] - m_new[e >> 1]);
      tile_sum[e >> 1] += s[nt][e];
      o[nt][e] = __fmul_rn(o[nt][e], alpha[e >> 1]);
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] = __fadd_rn(__fmul_rn(l[r], alpha[r]), QuadSum(tile_sum[r]));
    m[r] = m_new[r];
  }
}

template <typename Half>
__global__ void __launch_bounds__(mma::kThreads)
    ForwardKernel(FusedAttentionProblem whole, const Half* __restrict__ q,
                  const Half* __restrict__ k, const Half* __restrict__ v,
                  Half* __restrict__ context, float* __restrict__ logsumexp) {
  __shared__ StreamShared<Half> shared;
  const int bh = blockIdx.x;
  const int64_t i0 = static_cast<int64_t>(blockIdx.y) * kTile;
  // This pair's sequence (a packed batch's are of different lengths); a tile past its end
  // has nothing to do (the whole CTA leaves before any barrier).
  const FusedAttentionProblem problem = whole.ForPair(bh);
  if (i0 >= problem.seq) return;
  const int64_t head = problem.HeadOffset(bh);
  const int64_t key_tiles = TileCount(problem.seq);
  const ScoreRule score = ScoreRuleOf(problem, bh);

  // Q waits in stage 1's first tile until it is in registers (stage 1 is first written at the
  // top of iteration 0, after the barrier that follows these reads).
  mma::LoadTileAsync(shared.tiles[2], q + head, problem.hidden, i0, problem.seq);
  IssueKeyTile(problem, bh, k + head, v + head, 0, 0, shared);
  mma::CommitCopies();
  mma::WaitCopies();
  __syncthreads();
  mma::ARows qa;
  mma::LoadARows(shared.tiles[2], WarpRow0(), qa);

  mma::Accum o;
  mma::ZeroAccum(o);
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.0f, 0.0f};
  for (int64_t jt = 0; jt < key_tiles; ++jt) {
    const int stage = BeginKeyTile(problem, bh, k + head, v + head, i0, jt, key_tiles, shared);
    mma::Accum s;
    mma::ZeroAccum(s);
    mma::MmaWithNMajor(s, qa, shared.tiles[2 * stage]);
    OnlineSoftmaxTile(score, shared.key_bias[stage], s, m, l, o);
    // acc += dt(z ? e : 0) v: the dropped probabilities rounded to Half as the A operand.
    const uint32_t kept = KeptElementsRowsAreQueries(problem.dropout, shared.keep);
#pragma unroll
    for (int nt = 0; nt < mma::kNTiles; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        if (!IsKept(kept, nt, e)) s[nt][e] = 0.0f;
      }
    }
    mma::ARows pa;
    mma::AccumToA<Half>(s, pa);
    mma::MmaWithKMajor(o, pa, shared.tiles[2 * stage + 1]);
  }

  // context = dt((acc / l) * dropout_scale), logsumexp = m + log(l).
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t i = i0 + ThreadRow(r);
    if (i >= problem.seq) continue;
#pragma unroll
    for (int nt = 0; nt < mma::kNTiles; ++nt) {
      o[nt][2 * r] = __fdiv_rn(o[nt][2 * r], l[r]);
      o[nt][2 * r + 1] = __fdiv_rn(o[nt][2 * r + 1], l[r]);
    }
    StoreRowHalf(o, r, problem.dropout.keep_scale, context + head + i * problem.hidden);
    if (threadIdx.x % 4 == 0) {
      logsumexp[problem.RowStatOffset(bh) + i] = __fadd_rn(m[r], logf(l[r]));
    }
  }
}

// ---- backward: dQ per query tile ----

template <typename Half>
__global__ void __launch_bounds__(mma::kThreads)
    DqKernel(FusedAttentionProblem whole, const Half* __restrict__ d_context,
             const Half* __restrict__ q, const Half* __restrict__ k,
             const Half* __restrict__ v, const float* __restrict__ logsumexp,
             const float* __restrict__ row_dot, Half* __restrict__ dq) {
  __shared__ StreamShared<Half> shared;
  const int bh = blockIdx.x;
  const int64_t i0 = static_cast<int64_t>(blockIdx.y) * kTile;
  // This pair's sequence (a packed batch's are of different lengths); a tile past its end
  // has nothing to do (the whole CTA leaves before any barrier).
  const FusedAttentionProblem problem = whole.ForPair(bh);
  if (i0 >= problem.seq) return;
  const int64_t head = problem.HeadOffset(bh);
  const int64_t key_tiles = TileCount(problem.seq);
  const ScoreRule score = ScoreRuleOf(problem, bh);

  // Q and dO wait in stage 1 until they are in registers (as in the forward).
  mma::LoadTileAsync(shared.tiles[2], q + head, problem.hidden, i0, problem.seq);
  mma::LoadTileAsync(shared.tiles[3], d_context + head, problem.hidden, i0, problem.seq);
  IssueKeyTile(problem, bh, k + head, v + head, 0, 0, shared);
  mma::CommitCopies();
  mma::WaitCopies();
  __syncthreads();
  mma::ARows qa, da;
  mma::LoadARows(shared.tiles[2], WarpRow0(), qa);
  mma::LoadARows(shared.tiles[3], WarpRow0(), da);
  float lse[2], dsum[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    // Rows past the end are never stored; any finite values keep them harmless.
    const int64_t i = i0 + ThreadRow(r);
    const bool in_range = i < problem.seq;
    lse[r] = in_range ? logsumexp[problem.RowStatOffset(bh) + i] : 0.0f;
    dsum[r] = in_range ? row_dot[problem.RowStatOffset(bh) + i] : 0.0f;
  }

  mma::Accum dq_acc;
  mma::ZeroAccum(dq_acc);
  for (int64_t jt = 0; jt < key_tiles; ++jt) {
    const int stage = BeginKeyTile(problem, bh, k + head, v + head, i0, jt, key_tiles, shared);
    const Half* k_tile = shared.tiles[2 * stage];
    const Half* v_tile = shared.tiles[2 * stage + 1];
    // P = exp(s - logsumexp), in place of the scores.
    mma::Accum p;
    mma::ZeroAccum(p);
    mma::MmaWithNMajor(p, qa, k_tile);
#pragma unroll
    for (int nt = 0; nt < mma::kNTiles; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float s = score(p[nt][e], shared.key_bias[stage][mma::AccumCol(nt, e)]);
        p[nt][e] = expf(s - lse[e >> 1]);
      }
    }
    mma::Accum dp;
    mma::ZeroAccum(dp);
    mma::MmaWithNMajor(dp, da, v_tile);
    // dS = P (dP - D), dP = z ? (dO . v) * scale : 0; then dq += dt(dS) K.
    const uint32_t kept = KeptElementsRowsAreQueries(problem.dropout, shared.keep);
#pragma unroll
    for (int nt = 0; nt < mma::kNTiles; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float d_prob =
            IsKept(kept, nt, e) ? __fmul_rn(dp[nt][e], problem.dropout.keep_scale) : 0.0f;
        p[nt][e] = __fmul_rn(p[nt][e], __fsub_rn(d_prob, dsum[e >> 1]));
      }
    }
    mma::ARows dsa;
    mma::AccumToA<Half>(p, dsa);
    mma::MmaWithKMajor(dq_acc, dsa, k_tile);
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t i = i0 + ThreadRow(r);
    if (i < problem.seq) {
      StoreRowHalf(dq_acc, r, problem.softmax_scale, dq + head + i * problem.hidden);
    }
  }
}

// ---- backward: dK and dV per key tile ----

template <typename Half>
struct __align__(16) KeyTileShared {
  Half k[mma::kTileHalves];
  Half v[mma::kTileHalves];
  Half stages[2][2][mma::kTileHalves];  // [stage][0: Q, 1: dO]
  float lse[2][kTile];                    // per stage
  float dsum[2][kTile];
  uint64_t keep[kTile];
};
inline constexpr size_t kKeyTileSharedBytes = sizeof(KeyTileShared<__half>);
static_assert(sizeof(KeyTileShared<__nv_bfloat16>) == kKeyTileSharedBytes, "one layout for both types");

// Queues query tile `it` of Q and dO, and its logsumexp and D, into stage `stage`.
template <typename Half>
__device__ __forceinline__ void IssueQueryTile(const FusedAttentionProblem& problem, int bh,
                                               const Half* q_head, const Half* do_head,
                                               const float* logsumexp, const float* row_dot,
                                               int64_t it, int stage, KeyTileShared<Half>& shared) {
  const int64_t i0 = it * kTile;
  mma::LoadTileAsync(shared.stages[stage][0], q_head, problem.hidden, i0, problem.seq);
  mma::LoadTileAsync(shared.stages[stage][1], do_head, problem.hidden, i0, problem.seq);
  StoreRowStats(problem, bh, i0, logsumexp, row_dot, shared.lse[stage], shared.dsum[stage]);
}

template <typename Half>
__global__ void __launch_bounds__(mma::kThreads)
    DkDvKernel(FusedAttentionProblem whole, const Half* __restrict__ d_context,
               const Half* __restrict__ q, const Half* __restrict__ k,
               const Half* __restrict__ v, const float* __restrict__ logsumexp,
               const float* __restrict__ row_dot, Half* __restrict__ dk,
               Half* __restrict__ dv) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  KeyTileShared<Half>& shared = *reinterpret_cast<KeyTileShared<Half>*>(shared_bytes);
  const int bh = blockIdx.x;
  const int64_t j0 = static_cast<int64_t>(blockIdx.y) * kTile;
  // This pair's sequence (a packed batch's are of different lengths); a tile past its end
  // has nothing to do (the whole CTA leaves before any barrier).
  const FusedAttentionProblem problem = whole.ForPair(bh);
  if (j0 >= problem.seq) return;
  const int64_t head = problem.HeadOffset(bh);
  const int64_t query_tiles = TileCount(problem.seq);
  const ScoreRule score = ScoreRuleOf(problem, bh);

  mma::LoadTileAsync(shared.k, k + head, problem.hidden, j0, problem.seq);
  mma::LoadTileAsync(shared.v, v + head, problem.hidden, j0, problem.seq);
  IssueQueryTile(problem, bh, q + head, d_context + head, logsumexp, row_dot, 0, 0, shared);
  mma::CommitCopies();
  // The bias of the thread's two keys (rows of the transposed scores); -inf past the end makes
  // those rows' P exactly 0 (their dK, dV are not stored anyway).
  const float key_bias[2] = {problem.KeyBias(bh, j0 + ThreadRow(0)),
                             problem.KeyBias(bh, j0 + ThreadRow(1))};

  mma::Accum dk_acc, dv_acc;
  mma::ZeroAccum(dk_acc);
  mma::ZeroAccum(dv_acc);
  for (int64_t it = 0; it < query_tiles; ++it) {
    const int stage = static_cast<int>(it & 1);
    mma::WaitCopies();
    __syncthreads();
    if (it + 1 < query_tiles) {
      IssueQueryTile(problem, bh, q + head, d_context + head, logsumexp, row_dot, it + 1,
                     stage ^ 1, shared);
      mma::CommitCopies();
    }
    if (problem.dropout.on()) {
      FillKeepBits(problem, bh, it * kTile, j0, shared.keep);
      __syncthreads();
      // For the dQ kernel; done before the next tile's barrier, after which `keep` is refilled.
      if (problem.keep_table != nullptr) StoreKeepBits(problem, bh, it * kTile, blockIdx.y, shared.keep);
    }
    const Half* q_tile = shared.stages[stage][0];
    const Half* do_tile = shared.stages[stage][1];
    const float* lse = shared.lse[stage];
    const float* dsum = shared.dsum[stage];

    // P^T = exp(s^T - logsumexp) for the warp's 16 keys x 64 queries.
    mma::Accum p;
    {
      mma::ARows ka;
      mma::LoadARows(shared.k, WarpRow0(), ka);
      mma::ZeroAccum(p);
      mma::MmaWithNMajor(p, ka, q_tile);
    }
#pragma unroll
    for (int nt = 0; nt < mma::kNTiles; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float s = score(p[nt][e], key_bias[e >> 1]);
        p[nt][e] = expf(s - lse[mma::AccumCol(nt, e)]);
      }
    }
    const uint32_t kept = KeptElementsRowsAreKeys(problem.dropout, shared.keep);
    // dv += dt(z ? P * scale : 0)^T dO.
    {
      mma::Accum dropped;
#pragma unroll
      for (int nt = 0; nt < mma::kNTiles; ++nt) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          dropped[nt][e] =
              IsKept(kept, nt, e) ? __fmul_rn(p[nt][e], problem.dropout.keep_scale) : 0.0f;
        }
      }
      mma::ARows pa;
      mma::AccumToA<Half>(dropped, pa);
      mma::MmaWithKMajor(dv_acc, pa, do_tile);
    }
    // dP^T = V dO^T; dS^T = P^T (dP^T - D), in place of P^T; dk += dt(dS)^T Q.
    mma::Accum dp;
    {
      mma::ARows va;
      mma::LoadARows(shared.v, WarpRow0(), va);
      mma::ZeroAccum(dp);
      mma::MmaWithNMajor(dp, va, do_tile);
    }
#pragma unroll
    for (int nt = 0; nt < mma::kNTiles; ++nt) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float d_prob =
            IsKept(kept, nt, e) ? __fmul_rn(dp[nt][e], problem.dropout.keep_scale) : 0.0f;
        p[nt][e] = __fmul_rn(p[nt][e], __fsub_rn(d_prob, dsum[mma::AccumCol(nt, e)]));
      }
    }
    mma::ARows dsa;
    mma::AccumToA<Half>(p, dsa);
    mma::MmaWithKMajor(dk_acc, dsa, q_tile);
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t j = j0 + ThreadRow(r);
    if (j < problem.seq) {
      StoreRowHalf(dk_acc, r, problem.softmax_scale, dk + head + j * problem.hidden);
      StoreRowHalf(dv_acc, r, 1.0f, dv + head + j * problem.hidden);
    }
  }
}

}  // namespace fused_half
}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_FUSED_ATTENTION_HALF_CUH_
