// The shared memory each block of the fused attention kernels needs (fused_attention_f32.cuh,
// fused_attention_half.cuh), and whether a GPU's per-block limit holds it: on CUDA, fused
// attention is offered only where every kernel of the dtype fits (ops::FusedAttentionSupported;
// elsewhere the model runs eager attention). Plain C++, so the arithmetic and the choice are
// tested on the CPU (tests/kernels/cuda/fused_attention_shared_memory_test.cc); the kernels'
// layouts static_assert that their sizes are these.
//
// Above 48 KiB a kernel must opt in (cudaFuncAttributeMaxDynamicSharedMemorySize), up to the
// device's cudaDevAttrMaxSharedMemoryPerBlockOptin: 163 KiB on sm_80 and sm_87, 227 KiB on
// sm_90 and sm_100, but 99 KiB (101,376 bytes) on sm_86, sm_89 and sm_120, which run this
// binary's sm_80 code or its compute_90 PTX. The f32 dK/dV kernel, the largest, needs 100,608
// bytes: it fits those cards with 768 bytes to spare, so any growth of its layout must come
// with a smaller tile or an eager fallback, which the test below makes visible.
#ifndef XLMR_KERNELS_CUDA_FUSED_ATTENTION_SHARED_MEMORY_H_
#define XLMR_KERNELS_CUDA_FUSED_ATTENTION_SHARED_MEMORY_H_

#include <cstddef>
#include <cstdint>

#include "framework/tensor/dtype.h"

namespace xlmr::kernels::cuda {

// The tiles: 64 rows (queries or keys) of a 64-wide head.
inline constexpr size_t kSharedTileRows = 64;
inline constexpr size_t kSharedHead = 64;

// f32 kernels: q, k, v and dO tiles padded to 65 floats a row (bank-conflict free), per-row
// accumulators of 64 floats, per-row fp32 statistics and one 64-bit keep mask per row.
inline constexpr size_t kF32PaddedTileBytes = kSharedTileRows * (kSharedHead + 1) * sizeof(float);
inline constexpr size_t kF32AccumulatorBytes = kSharedTileRows * kSharedHead * sizeof(float);
inline constexpr size_t kRowFloatsBytes = kSharedTileRows * sizeof(float);
inline constexpr size_t kKeepMaskBytes = kSharedTileRows * sizeof(uint64_t);
// Forward: q, k, v tiles; the context accumulator; running max, running sum, key bias.
inline constexpr size_t kF32ForwardSharedBytes =
    3 * kF32PaddedTileBytes + kF32AccumulatorBytes + 3 * kRowFloatsBytes + kKeepMaskBytes;
// dQ: q, dO, k, v tiles; the dq accumulator; key bias.
inline constexpr size_t kF32DqSharedBytes =
    4 * kF32PaddedTileBytes + kF32AccumulatorBytes + kRowFloatsBytes + kKeepMaskBytes;
// dK/dV: k, v, q, dO tiles; dk and dv accumulators; logsumexp, D, key bias.
inline constexpr size_t kF32KeyTileSharedBytes =
    4 * kF32PaddedTileBytes + 2 * kF32AccumulatorBytes + 3 * kRowFloatsBytes + kKeepMaskBytes;

// f16 and bf16 kernels (one template, one layout): tiles of 64 rows of 72 16-bit elements
// (mma_fragments.cuh, 9,216 bytes). Forward and dQ use
// static shared memory (four tiles, under the 48 KiB every GPU allows without opting in);
// dK/dV asks for k, v and two stages of {q, dO} tiles, per-stage logsumexp and D, and the keep
// masks.
inline constexpr size_t kF16TileBytes = kSharedTileRows * 72 * 2;
inline constexpr size_t kF16KeyTileSharedBytes =
    6 * kF16TileBytes + 2 * 2 * kRowFloatsBytes + kKeepMaskBytes;

// The most dynamic shared memory one block of a `dtype` fused kernel asks for (f32, f16 and bf16;
// 0 for a dtype without fused CUDA kernels).
constexpr size_t FusedAttentionSharedBytes(DType dtype) {
  if (dtype == DType::kF32) return kF32KeyTileSharedBytes;  // the largest of the three
  if (dtype == DType::kF16 || dtype == DType::kBF16) return kF16KeyTileSharedBytes;
  return 0;
}

// Whether every `dtype` fused kernel fits a GPU whose per-block opt-in limit is `optin_bytes`
// (cudaDevAttrMaxSharedMemoryPerBlockOptin). False for a dtype without fused kernels.
constexpr bool FusedAttentionFitsSharedMemory(DType dtype, size_t optin_bytes) {
  return FusedAttentionSharedBytes(dtype) > 0 && FusedAttentionSharedBytes(dtype) <= optin_bytes;
}

// The per-block opt-in limits of the compute capabilities this binary runs on (sm_80 code on
// 8.x, compute_90 PTX on 9.0 and later), from NVIDIA's tables; the test checks every kernel
// against each.
struct SharedMemoryLimit {
  int major, minor;
  size_t optin_bytes;
};
inline constexpr SharedMemoryLimit kSharedMemoryOptInLimits[] = {
    {8, 0, 166912}, {8, 6, 101376}, {8, 7, 166912}, {8, 9, 101376},
    {9, 0, 232448}, {10, 0, 232448}, {12, 0, 101376},
};

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_FUSED_ATTENTION_SHARED_MEMORY_H_
