// Tensor-core building blocks for 16-bit kernels (f16 or bf16, the template parameter `Half`)
// with fp32 accumulation (sm_80 and later): shared-memory tiles of 64 x 64 16-bit elements,
// asynchronous global -> shared copies (cp.async), the register fragments of mma.sync.m16n8k16
// loaded with ldmatrix (which moves 16-bit elements whatever they encode), and the MMA itself.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16"), with g = lane / 4 and
// t = lane % 4:
//   A (16 x 16, row major), 4 registers of 2 halves:  a0 (g, 2t..2t+1)   a1 (g+8, 2t..2t+1)
//                                                     a2 (g, 2t+8..)     a3 (g+8, 2t+8..)
//   B (16 x 8, "col"), 2 registers of 2 halves:       b0 (k = 2t..2t+1, n = g)  b1 (k = 2t+8.., n = g)
//   C/D (16 x 8) fp32, 4 floats:                      c0, c1 (g, 2t..2t+1)  c2, c3 (g+8, 2t..2t+1)
// The lower 16 bits of a register hold the element with the smaller column (or k) index.
//
// Device-side header: include it only from .cu files of kernels/cuda.
#ifndef XLMR_KERNELS_CUDA_MMA_FRAGMENTS_CUH_
#define XLMR_KERNELS_CUDA_MMA_FRAGMENTS_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace xlmr::kernels::cuda::mma {

// A tile is kTileRows rows of kTileCols halves (one head: head_dim 64), each row padded to
// kTileStride halves. The padding makes the row stride 144 bytes, so the eight 16-byte row
// segments that one ldmatrix phase reads fall in eight distinct groups of four banks
// (144 = 128 + 16): conflict-free without an XOR swizzle.
inline constexpr int kTileRows = 64;
inline constexpr int kTileCols = 64;
inline constexpr int kTileStride = kTileCols + 8;
inline constexpr int kTileHalves = kTileRows * kTileStride;
inline constexpr int kTileBytes = kTileHalves * 2;  // 9216
// The CTA shape every kernel built on these tiles uses: 4 warps, each owning 16 rows of a tile.
inline constexpr int kWarps = 4;
inline constexpr int kThreads = kWarps * 32;
// Accumulator n-tiles (8 columns each) across a 64-column tile, and 16-deep k-steps along 64.
inline constexpr int kNTiles = kTileCols / 8;
inline constexpr int kKSteps = kTileCols / 16;

using AFrag = uint32_t[4];
// One warp's 16 x 64 A operand: the four 16 x 16 k-steps.
using ARows = uint32_t[kKSteps][4];
// One warp's 16 x 64 fp32 accumulator: eight 16 x 8 n-tiles.
using Accum = float[kNTiles][4];

__device__ __forceinline__ uint32_t SharedAddress(const void* pointer) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(pointer));
}

// The 16-bit element types the tiles hold.
template <typename Half>
inline constexpr bool kIsHalf = std::is_same_v<Half, __half> || std::is_same_v<Half, __nv_bfloat16>;

// ---- global -> shared copies ----

// Copies 16 bytes from global `src` to shared `dst` without going through registers; with
// bytes == 0 nothing is read and the 16 bytes are zero-filled (rows past the sequence end).
__device__ __forceinline__ void CopyAsync16(void* dst, const void* src, bool in_range) {
  const int bytes = in_range ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(SharedAddress(dst)),
               "l"(src), "r"(bytes));
}
__device__ __forceinline__ void CommitCopies() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits for every copy this thread issued; a __syncthreads must follow before other threads
// read what they copied.
__device__ __forceinline__ void WaitCopies() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}

// Queues the copy of rows [row0, row0 + 64) of a [rows, 64] head matrix (row stride
// `row_stride` halves, 16-byte aligned rows) into `tile`; rows >= `rows` become zeros, so that
// products with them are exact zeros (never garbage or NaN). Called by all kThreads threads.
template <typename Half>
__device__ __forceinline__ void LoadTileAsync(Half* tile, const Half* matrix,
                                              int64_t row_stride, int64_t row0, int64_t rows) {
  static_assert(kIsHalf<Half>, "f16 or bf16 tiles");
  constexpr int kChunksPerRow = kTileCols / 8;  // 16-byte chunks of 8 halves
  static_assert(kTileRows * kChunksPerRow % kThreads == 0, "whole chunks per thread");
#pragma unroll
  for (int it = 0; it < kTileRows * kChunksPerRow / kThreads; ++it) {
    const int chunk = threadIdx.x + it * kThreads;
    const int row = chunk / kChunksPerRow;
    const int col = (chunk % kChunksPerRow) * 8;
    const bool in_range = row0 + row < rows;
    // An out-of-range row reads nothing; point at row 0, which exists, all the same.
    const Half* src = matrix + (in_range ? (row0 + row) * row_stride : 0) + col;
    CopyAsync16(tile + row * kTileStride + col, src, in_range);
  }
}

// ---- fragments from shared memory ----

__device__ __forceinline__ void LoadMatrixX4(uint32_t (&r)[4], const void* address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SharedAddress(address)));
}
__device__ __forceinline__ void LoadMatrixX4Trans(uint32_t (&r)[4], const void* address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(SharedAddress(address)));
}

// The A operand rows [row0, row0 + 16) x all 64 columns of `tile`. Lane L gives the address of
// row (L % 16) of 8x8 matrix L / 8: matrices 0..3 = (rows 0-7, cols 0-7), (rows 8-15, cols 0-7),
// (rows 0-7, cols 8-15), (rows 8-15, cols 8-15) of the k-step, i.e. a0..a3.
template <typename Half>
__device__ __forceinline__ void LoadARows(const Half* tile, int row0, ARows& a) {
  const int lane = threadIdx.x % 32;
  const Half* row = tile + (row0 + (lane & 15)) * kTileStride + (lane >> 4) * 8;
#pragma unroll
  for (int kk = 0; kk < kKSteps; ++kk) LoadMatrixX4(a[kk], row + kk * 16);
}

// B fragments of n-tiles n0 and n0 + 8 at k-step kk, for an operand stored n-major (tile[n][k],
// e.g. K in Q K^T). b[0], b[1]: n-tile n0; b[2], b[3]: n-tile n0 + 8. Lane L addresses row
// (L % 8) + 8 * (L / 16), columns 8 * ((L / 8) % 2) of the k-step.
template <typename Half>
__device__ __forceinline__ void LoadBNMajor(const Half* tile, int n0, int kk, uint32_t (&b)[4]) {
  const int lane = threadIdx.x % 32;
  const int n = n0 + (lane & 7) + ((lane >> 4) << 3);
  const int k = kk * 16 + ((lane >> 3) & 1) * 8;
  LoadMatrixX4(b, tile + n * kTileStride + k);
}

// The same fragments for an operand stored k-major (tile[k][n], e.g. V in P V): ldmatrix
// transposes each 8x8 matrix, so lane (g, t) receives tile[2t][g], tile[2t+1][g] as b0 wants.
// Lane L addresses row (L % 8) + 8 * ((L / 8) % 2) of the k-step, columns n0 + 8 * (L / 16).
template <typename Half>
__device__ __forceinline__ void LoadBKMajor(const Half* tile, int n0, int kk, uint32_t (&b)[4]) {
  const int lane = threadIdx.x % 32;
  const int k = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
  const int n = n0 + ((lane >> 4) << 3);
  LoadMatrixX4Trans(b, tile + k * kTileStride + n);
}

// ---- the MMA ----

// c += a b for one 16 x 8 x 16 step: f16 or bf16 inputs, fp32 accumulation (the products of
// 16-bit values are exact in fp32 either way).
template <typename Half>
__device__ __forceinline__ void Mma16816(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  static_assert(kIsHalf<Half>, "f16 or bf16 operands");
  if constexpr (std::is_same_v<Half, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
        "{%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

__device__ __forceinline__ void ZeroAccum(Accum& c) {
#pragma unroll
  for (int nt = 0; nt < kNTiles; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) c[nt][e] = 0.0f;
  }
}

// c (16 x 64) += a (16 x 64) B, for B (64 x 64) stored n-major in `tile` (B(k, n) = tile[n][k]):
// the product with a transposed tile, e.g. Q K^T.
template <typename Half>
__device__ __forceinline__ void MmaWithNMajor(Accum& c, const ARows& a, const Half* tile) {
#pragma unroll
  for (int kk = 0; kk < kKSteps; ++kk) {
#pragma unroll
    for (int pair = 0; pair < kNTiles / 2; ++pair) {
      uint32_t b[4];
      LoadBNMajor(tile, pair * 16, kk, b);
      Mma16816<Half>(c[2 * pair], a[kk], b[0], b[1]);
      Mma16816<Half>(c[2 * pair + 1], a[kk], b[2], b[3]);
    }
  }
}

// c (16 x 64) += a (16 x 64) B, for B (64 x 64) stored k-major in `tile` (B(k, n) = tile[k][n]):
// the product with the tile as stored, e.g. P V.
template <typename Half>
__device__ __forceinline__ void MmaWithKMajor(Accum& c, const ARows& a, const Half* tile) {
#pragma unroll
  for (int kk = 0; kk < kKSteps; ++kk) {
#pragma unroll
    for (int pair = 0; pair < kNTiles / 2; ++pair) {
      uint32_t b[4];
      LoadBKMajor(tile, pair * 16, kk, b);
      Mma16816<Half>(c[2 * pair], a[kk], b[0], b[1]);
      Mma16816<Half>(c[2 * pair + 1], a[kk], b[2], b[3]);
    }
  }
}

// Two floats rounded to Half (round to nearest even) in one register, `low` in the low half.
template <typename Half>
__device__ __forceinline__ uint32_t PackHalves(float low, float high) {
  static_assert(kIsHalf<Half>, "f16 or bf16");
  if constexpr (std::is_same_v<Half, __half>) {
    const __half2 pair = __floats2half2_rn(low, high);
    return *reinterpret_cast<const uint32_t*>(&pair);
  } else {
    const __nv_bfloat162 pair = __floats2bfloat162_rn(low, high);
    return *reinterpret_cast<const uint32_t*>(&pair);
  }
}

// An accumulator (16 x 64, fp32, C layout) rounded to Half as the A operand of a next product:
// k-step kk covers columns 16 kk .. 16 kk + 15, i.e. n-tiles 2 kk and 2 kk + 1, and the C and A
// layouts put the same (row, column) in the same thread.
template <typename Half>
__device__ __forceinline__ void AccumToA(const Accum& c, ARows& a) {
#pragma unroll
  for (int kk = 0; kk < kKSteps; ++kk) {
    a[kk][0] = PackHalves<Half>(c[2 * kk][0], c[2 * kk][1]);
    a[kk][1] = PackHalves<Half>(c[2 * kk][2], c[2 * kk][3]);
    a[kk][2] = PackHalves<Half>(c[2 * kk + 1][0], c[2 * kk + 1][1]);
    a[kk][3] = PackHalves<Half>(c[2 * kk + 1][2], c[2 * kk + 1][3]);
  }
}

// Where accumulator element c[nt][e] sits in the warp's 16 x 64 tile.
__device__ __forceinline__ int AccumRow(int e) { return (threadIdx.x % 32) / 4 + 8 * (e >> 1); }
__device__ __forceinline__ int AccumCol(int nt, int e) {
  return nt * 8 + 2 * (threadIdx.x % 4) + (e & 1);
}

}  // namespace xlmr::kernels::cuda::mma

#endif  // XLMR_KERNELS_CUDA_MMA_FRAGMENTS_CUH_
