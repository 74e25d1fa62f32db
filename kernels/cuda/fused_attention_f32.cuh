// The f32 fused attention kernels: plain fp32 arithmetic on the CUDA cores (no tensor cores, no
// TF32, so products are as exact as the CPU's), the numerics of framework/ops/fused_attention.h.
// Included by kernels/cuda/fused_attention.cu only.
//
// The same decomposition as the 16-bit kernels (fused_attention_half.cuh): one CTA of 4 warps per
// (pair bh, 64-row tile), forward and dQ per query tile streaming key tiles, dK/dV per key tile
// streaming query tiles; no atomics, so results are the same run to run. Inside a tile a warp
// takes its 16 rows one after the other, lane l handling columns l and l + 32 of the row's
// scores (a dot product of 64 each) and output dimensions l and l + 32 of its accumulator (the
// row's probabilities broadcast from their lanes by shuffles).
//
// Correctness and memory come before speed here: tiles are loaded synchronously (no pipeline),
// the per-row accumulators live in shared memory (keeping 16 rows' accumulators in registers
// would need the row loop unrolled). Shared memory, all dynamic: forward 66 KiB, dQ 82 KiB,
// dK/dV 98 KiB (sm_80 allows 163 KiB per CTA, sm_90 227 KiB).
#ifndef XLMR_KERNELS_CUDA_FUSED_ATTENTION_F32_CUH_
#define XLMR_KERNELS_CUDA_FUSED_ATTENTION_F32_CUH_

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "kernels/cuda/fused_attention_tile.cuh"

namespace xlmr::kernels::cuda {
namespace fused_f32 {

inline constexpr int kWarps = 4;
inline constexpr int kThreads = kWarps * 32;
inline constexpr int kRowsPerWarp = kTile / kWarps;
// A 64 x 64 tile padded to 65 floats per row: lane l reading row l (a dot product per lane)
// then hits bank (l + d) % 32, so no two lanes conflict; a row read by all lanes broadcasts.
inline constexpr int kStride = kHead + 1;
inline constexpr int kTileFloats = kTile * kStride;
// One warp's row accumulators: [64 rows][64 dims], unpadded (lane l reads dims l and l + 32).
inline constexpr int kAccumFloats = kTile * kHead;

__device__ __forceinline__ float WarpMax(float x) {
  for (int offset = 16; offset > 0; offset /= 2) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, offset));
  }
  return x;
}
__device__ __forceinline__ float WarpSum(float x) {
  for (int offset = 16; offset > 0; offset /= 2) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

// tile[r][c] = matrix[row0 + r][c] for rows < `rows`, else 0 (so products with rows past the
// end are exact zeros). Coalesced: consecutive threads read consecutive columns.
__device__ __forceinline__ void LoadTile(float* tile, const float* matrix, int64_t row_stride,
                                         int64_t row0, int64_t rows) {
  for (int index = threadIdx.x; index < kTile * kHead; index += kThreads) {
    const int r = index / kHead, c = index % kHead;
    tile[r * kStride + c] = row0 + r < rows ? matrix[(row0 + r) * row_stride + c] : 0.0f;
  }
}

__device__ __forceinline__ void ZeroFloats(float* values, int count) {
  for (int index = threadIdx.x; index < count; index += kThreads) values[index] = 0.0f;
}

// fp32(a . b) over the 64 dimensions, in dimension order.
__device__ __forceinline__ float Dot(const float* a, const float* b) {
  float sum = 0.0f;
#pragma unroll 16
  for (int d = 0; d < kHead; ++d) sum = fmaf(a[d], b[d], sum);
  return sum;
}

// acc_l += sum_c weight_c * tile[c][l] and acc_h += ... tile[c][l + 32] over the 64 rows c of
// `tile`, where weight_c lives in lane c % 32: w_low for c < 32, w_high for c >= 32.
__device__ __forceinline__ void AccumulateRows(float w_low, float w_high, const float* tile,
                                               float& acc_l, float& acc_h) {
  const int lane = threadIdx.x % 32;
#pragma unroll 8
  for (int c = 0; c < 32; ++c) {
    const float w = __shfl_sync(0xffffffffu, w_low, c);
    acc_l = fmaf(w, tile[c * kStride + lane], acc_l);
    acc_h = fmaf(w, tile[c * kStride + lane + 32], acc_h);
  }
#pragma unroll 8
  for (int c = 0; c < 32; ++c) {
    const float w = __shfl_sync(0xffffffffu, w_high, c);
    acc_l = fmaf(w, tile[(c + 32) * kStride + lane], acc_l);
    acc_h = fmaf(w, tile[(c + 32) * kStride + lane + 32], acc_h);
  }
}

// ---- forward ----

struct ForwardShared {
  float q[kTileFloats], k[kTileFloats], v[kTileFloats];
  float acc[kAccumFloats];
  float m[kTile], l[kTile];
  float key_bias[kTile];
  uint64_t keep[kTile];
};

__global__ void __launch_bounds__(kThreads)
    ForwardKernel(FusedAttentionProblem whole, const float* __restrict__ q,
                  const float* __restrict__ k, const float* __restrict__ v,
                  float* __restrict__ context, float* __restrict__ logsumexp) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  ForwardShared& shared = *reinterpret_cast<ForwardShared*>(shared_bytes);
  const int bh = blockIdx.x;
  const int lane = threadIdx.x % 32;
  const int row0 = (threadIdx.x / 32) * kRowsPerWarp;
  const int64_t i0 = static_cast<int64_t>(blockIdx.y) * kTile;
  // This pair's sequence (a packed batch's are of different lengths); a tile past its end
  // has nothing to do (the whole CTA leaves before any barrier).
  const FusedAttentionProblem problem = whole.ForPair(bh);
  if (i0 >= problem.seq) return;
  const int64_t head = problem.HeadOffset(bh);
  const int64_t key_tiles = TileCount(problem.seq);
  const ScoreRule score = ScoreRuleOf(problem, bh);

  LoadTile(shared.q, q + head, problem.hidden, i0, problem.seq);
  ZeroFloats(shared.acc, kAccumFloats);
  if (threadIdx.x < kTile) {
    shared.m[threadIdx.x] = -INFINITY;
    shared.l[threadIdx.x] = 0.0f;
  }
  for (int64_t jt = 0; jt < key_tiles; ++jt) {
    const int64_t j0 = jt * kTile;
    __syncthreads();  // every warp is done with the previous key tile
    LoadTile(shared.k, k + head, problem.hidden, j0, problem.seq);
    LoadTile(shared.v, v + head, problem.hidden, j0, problem.seq);
    if (threadIdx.x < kTile) shared.key_bias[threadIdx.x] = problem.KeyBias(bh, j0 + threadIdx.x);
    if (problem.dropout.on()) FillKeepBits(problem, bh, i0, j0, shared.keep);
    __syncthreads();
    for (int row = row0; row < row0 + kRowsPerWarp && i0 + row < problem.seq; ++row) {
      const float* q_row = shared.q + row * kStride;
      const float s_low = score(Dot(q_row, shared.k + lane * kStride), shared.key_bias[lane]);
      const float s_high =
          score(Dot(q_row, shared.k + (lane + 32) * kStride), shared.key_bias[lane + 32]);
      // The online softmax step of the contract (fused_attention_half.cuh, OnlineSoftmaxTile).
      const float m = shared.m[row];
      const float m_new = fmaxf(m, WarpMax(fmaxf(s_low, s_high)));
      const float alpha = expf(m - m_new);
      const float e_low = expf(s_low - m_new), e_high = expf(s_high - m_new);
      const float tile_sum = WarpSum(e_low + e_high);
      const uint64_t keep = KeepRow(problem.dropout, shared.keep, row);
      float* acc = shared.acc + row * kHead;
      float acc_l = __fmul_rn(acc[lane], alpha), acc_h = __fmul_rn(acc[lane + 32], alpha);
      AccumulateRows(KeepBit(keep, lane) ? e_low : 0.0f, KeepBit(keep, lane + 32) ? e_high : 0.0f,
                     shared.v, acc_l, acc_h);
      acc[lane] = acc_l;
      acc[lane + 32] = acc_h;
      __syncwarp();  // every lane has read m and l before lane 0 overwrites them
      if (lane == 0) {
        shared.m[row] = m_new;
        shared.l[row] = __fadd_rn(__fmul_rn(shared.l[row], alpha), tile_sum);
      }
    }
  }
  __syncthreads();
  for (int row = row0; row < row0 + kRowsPerWarp && i0 + row < problem.seq; ++row) {
    const int64_t i = i0 + row;
    const float l = shared.l[row];
    float* out = context + head + i * problem.hidden;
    const float* acc = shared.acc + row * kHead;
    out[lane] = __fmul_rn(__fdiv_rn(acc[lane], l), problem.dropout.keep_scale);
    out[lane + 32] = __fmul_rn(__fdiv_rn(acc[lane + 32], l), problem.dropout.keep_scale);
    if (lane == 0) logsumexp[problem.RowStatOffset(bh) + i] = __fadd_rn(shared.m[row], logf(l));
  }
}

// ---- backward: dQ per query tile ----

struct DqShared {
  float q[kTileFloats], d_out[kTileFloats], k[kTileFloats], v[kTileFloats];
  float dq[kAccumFloats];
  float key_bias[kTile];
  uint64_t keep[kTile];
};

__global__ void __launch_bounds__(kThreads)
    DqKernel(FusedAttentionProblem whole, const float* __restrict__ d_context,
             const float* __restrict__ q, const float* __restrict__ k,
             const float* __restrict__ v, const float* __restrict__ logsumexp,
             const float* __restrict__ row_dot, float* __restrict__ dq) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  DqShared& shared = *reinterpret_cast<DqShared*>(shared_bytes);
  const int bh = blockIdx.x;
  const int lane = threadIdx.x % 32;
  const int row0 = (threadIdx.x / 32) * kRowsPerWarp;
  const int64_t i0 = static_cast<int64_t>(blockIdx.y) * kTile;
  // This pair's sequence (a packed batch's are of different lengths); a tile past its end
  // has nothing to do (the whole CTA leaves before any barrier).
  const FusedAttentionProblem problem = whole.ForPair(bh);
  if (i0 >= problem.seq) return;
  const int64_t head = problem.HeadOffset(bh);
  const int64_t key_tiles = TileCount(problem.seq);
  const ScoreRule score = ScoreRuleOf(problem, bh);

  LoadTile(shared.q, q + head, problem.hidden, i0, problem.seq);
  LoadTile(shared.d_out, d_context + head, problem.hidden, i0, problem.seq);
  ZeroFloats(shared.dq, kAccumFloats);
  for (int64_t jt = 0; jt < key_tiles; ++jt) {
    const int64_t j0 = jt * kTile;
    __syncthreads();
    LoadTile(shared.k, k + head, problem.hidden, j0, problem.seq);
    LoadTile(shared.v, v + head, problem.hidden, j0, problem.seq);
    if (threadIdx.x < kTile) shared.key_bias[threadIdx.x] = problem.KeyBias(bh, j0 + threadIdx.x);
    if (problem.dropout.on()) FillKeepBits(problem, bh, i0, j0, shared.keep);
    __syncthreads();
    for (int row = row0; row < row0 + kRowsPerWarp && i0 + row < problem.seq; ++row) {
      const int64_t stat = problem.RowStatOffset(bh) + i0 + row;
      const float lse = logsumexp[stat], dsum = row_dot[stat];
      const uint64_t keep = KeepRow(problem.dropout, shared.keep, row);
      float ds[2];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int c = lane + 32 * half;
        const float s = score(Dot(shared.q + row * kStride, shared.k + c * kStride),
                                      shared.key_bias[c]);
        const float p = expf(s - lse);
        const float dp = Dot(shared.d_out + row * kStride, shared.v + c * kStride);
        const float d_prob = KeepBit(keep, c) ? __fmul_rn(dp, problem.dropout.keep_scale) : 0.0f;
        ds[half] = __fmul_rn(p, __fsub_rn(d_prob, dsum));
      }
      float* acc = shared.dq + row * kHead;
      float acc_l = acc[lane], acc_h = acc[lane + 32];
      AccumulateRows(ds[0], ds[1], shared.k, acc_l, acc_h);
      acc[lane] = acc_l;
      acc[lane + 32] = acc_h;
    }
  }
  __syncthreads();
  for (int row = row0; row < row0 + kRowsPerWarp && i0 + row < problem.seq; ++row) {
    float* out = dq + head + (i0 + row) * problem.hidden;
    const float* acc = shared.dq + row * kHead;
    out[lane] = __fmul_rn(acc[lane], problem.softmax_scale);
    out[lane + 32] = __fmul_rn(acc[lane + 32], problem.softmax_scale);
  }
}

// ---- backward: dK and dV per key tile ----

struct KeyTileShared {
  float k[kTileFloats], v[kTileFloats], q[kTileFloats], d_out[kTileFloats];
  float dk[kAccumFloats], dv[kAccumFloats];
  float lse[kTile], dsum[kTile];
  float key_bias[kTile];
  uint64_t keep[kTile];
};

__global__ void __launch_bounds__(kThreads)
    DkDvKernel(FusedAttentionProblem whole, const float* __restrict__ d_context,
               const float* __restrict__ q, const float* __restrict__ k,
               const float* __restrict__ v, const float* __restrict__ logsumexp,
               const float* __restrict__ row_dot, float* __restrict__ dk,
               float* __restrict__ dv) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  KeyTileShared& shared = *reinterpret_cast<KeyTileShared*>(shared_bytes);
  const int bh = blockIdx.x;
  const int lane = threadIdx.x % 32;
  const int row0 = (threadIdx.x / 32) * kRowsPerWarp;  // the warp's first key of the tile
  const int64_t j0 = static_cast<int64_t>(blockIdx.y) * kTile;
  // This pair's sequence (a packed batch's are of different lengths); a tile past its end
  // has nothing to do (the whole CTA leaves before any barrier).
  const FusedAttentionProblem problem = whole.ForPair(bh);
  if (j0 >= problem.seq) return;
  const int64_t head = problem.HeadOffset(bh);
  const int64_t query_tiles = TileCount(problem.seq);
  const ScoreRule score = ScoreRuleOf(problem, bh);

  LoadTile(shared.k, k + head, problem.hidden, j0, problem.seq);
  LoadTile(shared.v, v + head, problem.hidden, j0, problem.seq);
  ZeroFloats(shared.dk, kAccumFloats);
  ZeroFloats(shared.dv, kAccumFloats);
  if (threadIdx.x < kTile) shared.key_bias[threadIdx.x] = problem.KeyBias(bh, j0 + threadIdx.x);
  for (int64_t it = 0; it < query_tiles; ++it) {
    const int64_t i0 = it * kTile;
    __syncthreads();
    LoadTile(shared.q, q + head, problem.hidden, i0, problem.seq);
    LoadTile(shared.d_out, d_context + head, problem.hidden, i0, problem.seq);
    if (threadIdx.x < kTile) {
      // A query past the end: P = exp(s - inf) = 0 and D = 0, so it adds nothing.
      const int64_t i = i0 + threadIdx.x;
      const bool in_range = i < problem.seq;
      shared.lse[threadIdx.x] = in_range ? logsumexp[problem.RowStatOffset(bh) + i] : INFINITY;
      shared.dsum[threadIdx.x] = in_range ? row_dot[problem.RowStatOffset(bh) + i] : 0.0f;
    }
    if (problem.dropout.on()) FillKeepBits(problem, bh, i0, j0, shared.keep);
    __syncthreads();
    for (int key = row0; key < row0 + kRowsPerWarp && j0 + key < problem.seq; ++key) {
      float dropped[2], ds[2];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int c = lane + 32 * half;  // the query
        const float s = score(Dot(shared.q + c * kStride, shared.k + key * kStride),
                                      shared.key_bias[key]);
        const float p = expf(s - shared.lse[c]);
        const bool kept = KeepBit(KeepRow(problem.dropout, shared.keep, c), key);
        dropped[half] = kept ? __fmul_rn(p, problem.dropout.keep_scale) : 0.0f;
        const float dp = Dot(shared.d_out + c * kStride, shared.v + key * kStride);
        const float d_prob = kept ? __fmul_rn(dp, problem.dropout.keep_scale) : 0.0f;
        ds[half] = __fmul_rn(p, __fsub_rn(d_prob, shared.dsum[c]));
      }
      float* dv_acc = shared.dv + key * kHead;
      float* dk_acc = shared.dk + key * kHead;
      float dv_l = dv_acc[lane], dv_h = dv_acc[lane + 32];
      float dk_l = dk_acc[lane], dk_h = dk_acc[lane + 32];
      AccumulateRows(dropped[0], dropped[1], shared.d_out, dv_l, dv_h);
      AccumulateRows(ds[0], ds[1], shared.q, dk_l, dk_h);
      dv_acc[lane] = dv_l;
      dv_acc[lane + 32] = dv_h;
      dk_acc[lane] = dk_l;
      dk_acc[lane + 32] = dk_h;
    }
  }
  __syncthreads();
  for (int key = row0; key < row0 + kRowsPerWarp && j0 + key < problem.seq; ++key) {
    const int64_t row = (j0 + key) * problem.hidden;
    const float* dk_acc = shared.dk + key * kHead;
    const float* dv_acc = shared.dv + key * kHead;
    dk[head + row + lane] = __fmul_rn(dk_acc[lane], problem.softmax_scale);
    dk[head + row + lane + 32] = __fmul_rn(dk_acc[lane + 32], problem.softmax_scale);
    dv[head + row + lane] = dv_acc[lane];
    dv[head + row + lane + 32] = dv_acc[lane + 32];
  }
}

}  // namespace fused_f32
}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_FUSED_ATTENTION_F32_CUH_
