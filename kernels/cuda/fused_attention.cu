// Fused attention on the GPU: the launches of the f16 and bf16 (fused_attention_half.cuh) and f32
// (fused_attention_f32.cuh) kernels, and the row dot products D_i of the backward.
//
// Backward scheme (deterministic): D = rowsum(dcontext * context) first (one warp per row), then
// one kernel per key tile computing dK and dV over all query tiles, and one per query tile
// computing dQ over all key tiles. Each output element is written by exactly one CTA, summed
// in a fixed order, so gradients are bit-identical from run to run (FlashAttention-2 instead
// adds dQ with fp32 atomics from the key-tile CTAs, whose order varies). The price is that S
// and dP are computed twice per tile pair. Workspace: D, [B, heads, S] f32 (kWorkspace), and
// nothing of size S x S anywhere.
#include "kernels/cuda/fused_attention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "framework/core/check.h"
#include "framework/random/philox.h"
#include "kernels/common/attention_dropout_index.h"
#include "kernels/common/attention_geometry.h"
#include "kernels/common/dropout_scale.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"
#include "kernels/cuda/fused_attention_half.cuh"
#include "kernels/cuda/fused_attention_f32.cuh"
#include "kernels/cuda/fused_attention_shared_memory.h"
#include "kernels/cuda/fused_attention_tile.cuh"

namespace xlmr::kernels::cuda {
namespace {

static_assert(kFusedAttentionHeadDim == kHead, "the kernels are compiled for head_dim 64");
// The layouts are what fused_attention_shared_memory.h counts (the choice of fused or eager
// attention by the device's limit rests on those counts).
static_assert(sizeof(fused_f32::ForwardShared) == kF32ForwardSharedBytes);
static_assert(sizeof(fused_f32::DqShared) == kF32DqSharedBytes);
static_assert(sizeof(fused_f32::KeyTileShared) == kF32KeyTileSharedBytes);
static_assert(fused_half::kKeyTileSharedBytes == kF16KeyTileSharedBytes);
static_assert(static_cast<size_t>(mma::kTileBytes) == kF16TileBytes &&
              static_cast<size_t>(mma::kTileRows) == kSharedTileRows);
static_assert(kF32KeyTileSharedBytes >= kF32DqSharedBytes &&
              kF32KeyTileSharedBytes >= kF32ForwardSharedBytes,
              "FusedAttentionSharedBytes returns the largest f32 layout");

cudaStream_t Stream() { return CudaContext::Current().compute_stream(); }

// ---- D_i = sum_d fp32(dcontext_id * context_id) ----

__device__ __forceinline__ float2 LoadPair(const float* p) {
  return *reinterpret_cast<const float2*>(p);
}
__device__ __forceinline__ float2 LoadPair(const __half* p) {
  return __half22float2(*reinterpret_cast<const __half2*>(p));
}
__device__ __forceinline__ float2 LoadPair(const __nv_bfloat16* p) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(p));
}

constexpr int kRowDotThreads = 256;
constexpr int kRowDotWarps = kRowDotThreads / 32;

// One warp per row of D (padded: [B, heads, S]; packed: [heads, T]), grid stride; lane l multiplies
// dimensions 2l and 2l + 1 (16-bit x 16-bit products are exact in fp32), the warp sums.
template <typename T>
__global__ void __launch_bounds__(kRowDotThreads)
    RowDotKernel(FusedAttentionProblem problem, int64_t rows, const T* __restrict__ d_context,
                 const T* __restrict__ context, float* __restrict__ row_dot) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kRowDotWarps;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kRowDotWarps + threadIdx.x / 32;
       row < rows; row += warps) {
    const int64_t offset = problem.StatRowOffset(row) + 2 * lane;
    const float2 dc = LoadPair(d_context + offset);
    const float2 c = LoadPair(context + offset);
    float sum = __fadd_rn(__fmul_rn(dc.x, c.x), __fmul_rn(dc.y, c.y));
    for (int step = 16; step > 0; step /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, step);
    if (lane == 0) row_dot[row] = sum;
  }
}

// ---- host side ----

// The problem of either form: `batch` sequences of up to `max_seq` tokens; key_mask (padded) or
// cu_seqlens (packed, on the device) set by the caller.
FusedAttentionProblem MakeProblem(int64_t batch, int64_t max_seq, int64_t hidden, int64_t heads,
                                  float dropout_p, const DropoutKey& dropout_key,
                                  int64_t dropout_stride) {
  XLMR_CHECK(hidden / heads == kHead) << "fused attention: CUDA kernels need head_dim " << kHead
                                      << ", got " << hidden / heads;
  FusedAttentionProblem problem{};
  problem.seq = max_seq;
  problem.hidden = hidden;
  problem.heads = static_cast<int>(heads);
  problem.softmax_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(kHead)));
  problem.dropout_stride = dropout_stride;
  if (dropout_p != 0.0f) {
    const int64_t elements = AttentionDropoutElements(batch, heads, dropout_stride);
    XLMR_CHECK(dropout_stride >= max_seq && elements <= kMaxDropoutElements)
        << "fused attention dropout over " << elements << " elements (stride " << dropout_stride
        << ", sequences of up to " << max_seq << ") exceeds the Philox counter";
    problem.dropout.p = dropout_p;
    problem.dropout.keep_scale = DropoutScale(dropout_p);
    problem.dropout.site = DropoutSiteOf(dropout_key);  // also checks the layer/op ranges
  }
  return problem;
}

FusedAttentionProblem PaddedProblem(const AttentionGeometry& g, const Tensor& key_mask,
                                    float dropout_p, const DropoutKey& dropout_key,
                                    int64_t dropout_stride) {
  FusedAttentionProblem problem =
      MakeProblem(g.batch, g.seq, g.hidden, g.heads, dropout_p, dropout_key, dropout_stride);
  problem.key_mask = key_mask.data<int32_t>();
  return problem;
}

FusedAttentionProblem PackedProblem(const Tensor& q, const Tensor& cu_seqlens_device,
                                    int64_t max_seqlen, int num_heads, float dropout_p,
                                    const DropoutKey& dropout_key, int64_t dropout_stride) {
  FusedAttentionProblem problem =
      MakeProblem(cu_seqlens_device.numel() - 1, max_seqlen, q.dim(1), num_heads, dropout_p,
                  dropout_key, dropout_stride);
  problem.cu_seqlens = cu_seqlens_device.data<int32_t>();
  problem.tokens = q.dim(0);
  return problem;
}

// The grid of every tile kernel: x = the B * heads pairs, y = the 64-row tiles of the longest
// sequence.
dim3 TileGrid(int64_t pairs, int64_t max_seq) {
  const int64_t tiles = TileCount(max_seq);
  XLMR_CHECK(pairs <= INT32_MAX && tiles <= 65535)
      << "fused attention: " << pairs << " (batch, head) pairs x " << tiles << " tiles";
  return dim3(static_cast<unsigned>(pairs), static_cast<unsigned>(tiles));
}

// cp.async copies 16-byte chunks; every head row starts at a multiple of 128 bytes from the
// tensor's start (H = heads * 64), so the start must be 16-byte aligned.
void CheckAligned(const Tensor& t, const char* what) {
  XLMR_CHECK(reinterpret_cast<uintptr_t>(t.raw_data()) % 16 == 0)
      << "fused attention: " << what << " is not 16-byte aligned";
}

template <typename T>
const T* Data(const Tensor& t) {
  return static_cast<const T*>(t.raw_data());
}
template <typename T>
T* MutableData(Tensor* t) {
  return static_cast<T*>(t->raw_data());
}

// Lets `kernel` use `bytes` of dynamic shared memory (above 48 KiB it must opt in).
template <typename Kernel>
void AllowSharedBytes(Kernel kernel, size_t bytes) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(bytes)));
}

template <typename Half>
void LaunchHalfForward(const dim3& grid, const FusedAttentionProblem& problem, const Tensor& q,
                       const Tensor& k, const Tensor& v, Tensor* context, Tensor* logsumexp) {
  fused_half::ForwardKernel<Half><<<grid, mma::kThreads, 0, Stream()>>>(
      problem, Data<Half>(q), Data<Half>(k), Data<Half>(v), MutableData<Half>(context),
      logsumexp->data<float>());
}

void LaunchForward(const dim3& grid, const FusedAttentionProblem& problem, const Tensor& q,
                   const Tensor& k, const Tensor& v, Tensor* context, Tensor* logsumexp) {
  if (q.dtype() == DType::kF16) {
    LaunchHalfForward<__half>(grid, problem, q, k, v, context, logsumexp);
  } else if (q.dtype() == DType::kBF16) {
    LaunchHalfForward<__nv_bfloat16>(grid, problem, q, k, v, context, logsumexp);
  } else {
    constexpr size_t kBytes = sizeof(fused_f32::ForwardShared);
    AllowSharedBytes(fused_f32::ForwardKernel, kBytes);
    fused_f32::ForwardKernel<<<grid, fused_f32::kThreads, kBytes, Stream()>>>(
        problem, q.data<float>(), k.data<float>(), v.data<float>(), context->data<float>(),
        logsumexp->data<float>());
  }
  KERNEL_LAUNCH_CHECK();
}

// D of every query row into `row_dot` (the logsumexp's shape).
void LaunchRowDot(const FusedAttentionProblem& problem, const Tensor& d_context,
                  const Tensor& context, Tensor* row_dot) {
  const int64_t rows = row_dot->numel();
  const int64_t resident = int64_t{CudaContext::Current().multiprocessor_count()} * 8;
  const int64_t needed = (rows + kRowDotWarps - 1) / kRowDotWarps;
  const int grid = static_cast<int>(needed < resident ? needed : resident);
  if (d_context.dtype() == DType::kF16) {
    RowDotKernel<__half><<<grid, kRowDotThreads, 0, Stream()>>>(
        problem, rows, Data<__half>(d_context), Data<__half>(context), row_dot->data<float>());
  } else if (d_context.dtype() == DType::kBF16) {
    RowDotKernel<__nv_bfloat16><<<grid, kRowDotThreads, 0, Stream()>>>(
        problem, rows, Data<__nv_bfloat16>(d_context), Data<__nv_bfloat16>(context), row_dot->data<float>());
  } else {
    RowDotKernel<float><<<grid, kRowDotThreads, 0, Stream()>>>(
        problem, rows, d_context.data<float>(), context.data<float>(), row_dot->data<float>());
  }
  KERNEL_LAUNCH_CHECK();
}

template <typename Half>
void LaunchHalfBackward(const dim3& grid, const FusedAttentionProblem& whole,
                        const Tensor& d_context, const Tensor& q, const Tensor& k, const Tensor& v,
                        const Tensor& logsumexp, const Tensor& row_dot, Tensor* dq, Tensor* dk,
                        Tensor* dv) {
  // With dropout, the keep bits pass from the dK/dV kernel to the dQ kernel through a table of one
  // word per (pair, query row, key tile): 8 MiB for XLM-R large's 16 x 16 pairs at 512 tokens,
  // freed (stream-ordered) when the backward returns.
  FusedAttentionProblem problem = whole;
  Tensor keep_table;
  if (problem.dropout.on()) {
    const int64_t tiles = grid.y;
    keep_table = Tensor::Empty({static_cast<int64_t>(grid.x) * tiles * kTile * tiles}, DType::kI64, Device::kCuda,
                               MemoryCategory::kWorkspace);
    problem.keep_table = static_cast<uint64_t*>(keep_table.raw_data());
    problem.keep_table_tiles = tiles;
  }
  constexpr size_t kKeyBytes = fused_half::kKeyTileSharedBytes;
  AllowSharedBytes(fused_half::DkDvKernel<Half>, kKeyBytes);
  fused_half::DkDvKernel<Half><<<grid, mma::kThreads, kKeyBytes, Stream()>>>(
      problem, Data<Half>(d_context), Data<Half>(q), Data<Half>(k), Data<Half>(v),
      logsumexp.data<float>(), row_dot.data<float>(), MutableData<Half>(dk), MutableData<Half>(dv));
  KERNEL_LAUNCH_CHECK();
  fused_half::DqKernel<Half><<<grid, mma::kThreads, 0, Stream()>>>(
      problem, Data<Half>(d_context), Data<Half>(q), Data<Half>(k), Data<Half>(v),
      logsumexp.data<float>(), row_dot.data<float>(), MutableData<Half>(dq));
  KERNEL_LAUNCH_CHECK();
}

void LaunchBackward(const dim3& grid, const FusedAttentionProblem& problem,
                    const Tensor& d_context, const Tensor& q, const Tensor& k, const Tensor& v,
                    const Tensor& logsumexp, const Tensor& row_dot, Tensor* dq, Tensor* dk,
                    Tensor* dv) {
  if (q.dtype() == DType::kF16) {
    LaunchHalfBackward<__half>(grid, problem, d_context, q, k, v, logsumexp, row_dot, dq, dk, dv);
  } else if (q.dtype() == DType::kBF16) {
    LaunchHalfBackward<__nv_bfloat16>(grid, problem, d_context, q, k, v, logsumexp, row_dot, dq, dk, dv);
  } else {
    constexpr size_t kKeyBytes = sizeof(fused_f32::KeyTileShared);
    constexpr size_t kQueryBytes = sizeof(fused_f32::DqShared);
    AllowSharedBytes(fused_f32::DkDvKernel, kKeyBytes);
    AllowSharedBytes(fused_f32::DqKernel, kQueryBytes);
    fused_f32::DkDvKernel<<<grid, fused_f32::kThreads, kKeyBytes, Stream()>>>(
        problem, d_context.data<float>(), q.data<float>(), k.data<float>(), v.data<float>(),
        logsumexp.data<float>(), row_dot.data<float>(), dk->data<float>(), dv->data<float>());
    KERNEL_LAUNCH_CHECK();
    fused_f32::DqKernel<<<grid, fused_f32::kThreads, kQueryBytes, Stream()>>>(
        problem, d_context.data<float>(), q.data<float>(), k.data<float>(), v.data<float>(),
        logsumexp.data<float>(), row_dot.data<float>(), dq->data<float>());
    KERNEL_LAUNCH_CHECK();
  }
}

Tensor NewActivation(const Shape& shape, DType dtype) {
  return Tensor::Empty(shape, dtype, Device::kCuda, MemoryCategory::kActivations);
}

}  // namespace

bool FusedAttentionFitsCurrentDevice(DType dtype) {
  return FusedAttentionFitsSharedMemory(dtype,
                                        CudaContext::Current().shared_memory_per_block_optin());
}

namespace {

void CheckDType(const Tensor& q) {
  XLMR_CHECK(q.dtype() == DType::kF32 || q.dtype() == DType::kF16 || q.dtype() == DType::kBF16)
      << "fused attention: CUDA kernels for f32, f16 and bf16 only, got " << DTypeName(q.dtype());
}

// The forward of either form; `lse_shape` has one element per query row.
void Forward(const dim3& grid, const FusedAttentionProblem& problem, const Tensor& q,
             const Tensor& k, const Tensor& v, const Shape& lse_shape, Tensor* context,
             Tensor* logsumexp) {
  // Empty: the kernel writes every context element and every logsumexp of a row inside a
  // sequence (every row: padded rows all are, and cu_seqlens covers all T packed ones).
  *context = NewActivation(q.shape(), q.dtype());
  *logsumexp = NewActivation(lse_shape, DType::kF32);
  if (logsumexp->numel() == 0) return;  // nothing to write; an empty grid is a launch error
  for (const Tensor* t : {&q, &k, &v}) CheckAligned(*t, "q, k or v");
  LaunchForward(grid, problem, q, k, v, context, logsumexp);
}

// The backward of either form.
void Backward(const dim3& grid, const FusedAttentionProblem& problem, const Tensor& d_context,
              const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& context,
              const Tensor& logsumexp, Tensor* dq, Tensor* dk, Tensor* dv) {
  // Empty: the dK/dV kernel writes every row of dk and dv, the dQ kernel every row of dq.
  *dq = NewActivation(q.shape(), q.dtype());
  *dk = NewActivation(q.shape(), q.dtype());
  *dv = NewActivation(q.shape(), q.dtype());
  if (logsumexp.numel() == 0) return;
  for (const Tensor* t : {&d_context, &q, &k, &v, &context}) {
    CheckAligned(*t, "d_context, q, k, v or context");
  }
  Tensor row_dot = Tensor::Empty(logsumexp.shape(), DType::kF32, Device::kCuda,
                                 MemoryCategory::kWorkspace);
  LaunchRowDot(problem, d_context, context, &row_dot);
  LaunchBackward(grid, problem, d_context, q, k, v, logsumexp, row_dot, dq, dk, dv);
}

}  // namespace

void FusedAttentionForward(const Tensor& q, const Tensor& k, const Tensor& v,
                           const Tensor& key_mask, int num_heads, float dropout_p,
                           const DropoutKey& dropout_key, int64_t dropout_stride, Tensor* context,
                           Tensor* logsumexp) {
  CheckDType(q);
  const AttentionGeometry g = AttentionGeometryOf(q, num_heads);
  const FusedAttentionProblem problem =
      PaddedProblem(g, key_mask, dropout_p, dropout_key, dropout_stride);
  Forward(TileGrid(g.batch * g.heads, g.seq), problem, q, k, v, {g.batch, g.heads, g.seq},
          context, logsumexp);
}

void FusedAttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k,
                            const Tensor& v, const Tensor& context, const Tensor& logsumexp,
                            const Tensor& key_mask, int num_heads, float dropout_p,
                            const DropoutKey& dropout_key, int64_t dropout_stride, Tensor* dq,
                            Tensor* dk, Tensor* dv) {
  CheckDType(q);
  const AttentionGeometry g = AttentionGeometryOf(q, num_heads);
  const FusedAttentionProblem problem =
      PaddedProblem(g, key_mask, dropout_p, dropout_key, dropout_stride);
  Backward(TileGrid(g.batch * g.heads, g.seq), problem, d_context, q, k, v, context, logsumexp,
           dq, dk, dv);
}

void VarlenFusedAttentionForward(const Tensor& q, const Tensor& k, const Tensor& v,
                                 const Tensor& cu_seqlens, int64_t max_seqlen, int num_heads,
                                 float dropout_p, const DropoutKey& dropout_key,
                                 int64_t dropout_stride, Tensor* context, Tensor* logsumexp) {
  CheckDType(q);
  const FusedAttentionProblem problem = PackedProblem(q, cu_seqlens, max_seqlen, num_heads,
                                                      dropout_p, dropout_key, dropout_stride);
  Forward(TileGrid((cu_seqlens.numel() - 1) * num_heads, max_seqlen), problem, q, k, v,
          {num_heads, q.dim(0)}, context, logsumexp);
}

void VarlenFusedAttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k,
                                  const Tensor& v, const Tensor& context, const Tensor& logsumexp,
                                  const Tensor& cu_seqlens, int64_t max_seqlen, int num_heads,
                                  float dropout_p, const DropoutKey& dropout_key,
                                  int64_t dropout_stride, Tensor* dq, Tensor* dk, Tensor* dv) {
  CheckDType(q);
  const FusedAttentionProblem problem = PackedProblem(q, cu_seqlens, max_seqlen, num_heads,
                                                      dropout_p, dropout_key, dropout_stride);
  Backward(TileGrid((cu_seqlens.numel() - 1) * num_heads, max_seqlen), problem, d_context, q, k,
           v, context, logsumexp, dq, dk, dv);
}

}  // namespace xlmr::kernels::cuda
