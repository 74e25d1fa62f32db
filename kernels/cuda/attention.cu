#include "kernels/cuda/attention.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>

#include "framework/core/check.h"
#include "framework/random/philox.h"
#include "kernels/common/attention_geometry.h"
#include "kernels/common/attention_dropout_index.h"
#include "kernels/common/dropout_scale.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"
#include "kernels/cuda/float_access.cuh"
#include "kernels/cuda/gemm.h"
#include "kernels/cuda/philox_device.cuh"
#include "kernels/cuda/row_reduce.cuh"

namespace xlmr::kernels::cuda {
namespace {

// One block of kRowThreads threads per row of scores; the threads stride over the keys, so a
// row of any length fits one block.
constexpr int kRowThreads = 128;
constexpr int kRowWarps = kRowThreads / 32;

// ---- Attention dropout: the Philox mask of framework/random/philox.h ----

struct AttentionDropout {
  float p = 0.0f;           // 0: no dropout (the mask is never generated)
  float keep_scale = 1.0f;  // DropoutScale(p): 1 / (1 - p) rounded to fp32
  DropoutSite site{};       // the Philox key and upper counter words of the DropoutKey
  int64_t seq = 1;          // S
  int64_t stride = 1;       // the mask index's (kernels/common/attention_dropout_index.h)

  // The mask index of key 0 of score row `row` (= pair * S + i) of [B, heads, S, S].
  __device__ __forceinline__ int64_t RowFirst(int64_t row) const {
    return AttentionDropoutIndex(row / seq, stride, row % seq, 0);
  }
};

AttentionDropout MakeDropout(float p, const DropoutKey& key, const AttentionGeometry& g,
                             int64_t stride) {
  AttentionDropout dropout;
  if (p == 0.0f) return dropout;
  const int64_t elements = AttentionDropoutElements(g.batch, g.heads, stride);
  XLMR_CHECK(stride >= g.seq && elements <= kMaxDropoutElements)
      << "attention dropout over " << elements << " elements (stride " << stride
      << ") exceeds the Philox counter or is shorter than S = " << g.seq;
  dropout.seq = g.seq;
  dropout.stride = stride;
  dropout.p = p;
  dropout.keep_scale = DropoutScale(p);
  dropout.site = DropoutSiteOf(key);  // also checks the layer/op ranges
  return dropout;
}

// Bit `lane` (0..3) is set iff flat element 4 * block + lane is kept: DropoutUniform >= p, as
// the CPU backend decides. One Philox call gives the four uniforms; no call without dropout.
__device__ __forceinline__ unsigned KeptLanes(const AttentionDropout& dropout, int64_t block) {
  if (dropout.p == 0.0f) return 0xfu;
  const uint4 words = DropoutBlockWords(dropout.site, static_cast<uint32_t>(block));
  return (UniformFromWordDevice(words.x) >= dropout.p ? 1u : 0u) |
         (UniformFromWordDevice(words.y) >= dropout.p ? 2u : 0u) |
         (UniformFromWordDevice(words.z) >= dropout.p ? 4u : 0u) |
         (UniformFromWordDevice(words.w) >= dropout.p ? 8u : 0u);
}

// `value` through dropout: scaled in fp32 where kept, else exactly 0 (also for inf or NaN, as
// on the CPU). Without dropout keep_scale is 1, so the value is unchanged.
__device__ __forceinline__ float Dropped(const AttentionDropout& dropout, float value, bool kept) {
  return kept ? __fmul_rn(value, dropout.keep_scale) : 0.0f;
}

// Calls visit(j, kept) for every key j of the score row whose key 0 has mask index `first`
// (AttentionDropout::RowFirst), with the dropout decision for mask element first + j. Each thread
// takes whole Philox blocks (4 consecutive mask elements; a row need not start at a multiple of
// 4), so one Philox call serves four elements, and every key is visited by exactly one thread:
// the same thread on every call for the same row (in-place updates need no synchronisation).
template <typename Visit>
__device__ __forceinline__ void ForEachKeyOfRow(const AttentionDropout& dropout, int64_t first,
                                                int64_t seq, Visit visit) {
  const int64_t end = first + seq;
  for (int64_t block = first / 4 + threadIdx.x; block * 4 < end; block += kRowThreads) {
    const unsigned kept = KeptLanes(dropout, block);
#pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const int64_t index = block * 4 + lane;
      if (index >= first && index < end) visit(index - first, ((kept >> lane) & 1u) != 0);
    }
  }
}

// ---- fp32 compute, storage of T ----

__device__ __forceinline__ float ToFloat(float value) { return value; }
__device__ __forceinline__ float ToFloat(__half value) { return __half2float(value); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 value) { return __bfloat162float(value); }
template <typename T>
__device__ T FromFloat(float value);
template <>
__device__ __forceinline__ float FromFloat<float>(float value) {
  return value;
}
template <>
__device__ __forceinline__ __half FromFloat<__half>(float value) {
  return __float2half_rn(value);
}
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float value) {
  return __float2bfloat16_rn(value);
}
// `value` after a round trip through storage of T (torch's fp16 intermediates).
template <typename T>
__device__ __forceinline__ float StoredAs(float value) {
  return ToFloat(FromFloat<T>(value));
}

// ---- The elementwise steps between the GEMMs ----

// Score of key j: ((q k^T) rounded, times scale, rounded) plus the key bias, as the CPU does.
template <typename T>
__device__ __forceinline__ float BiasedScore(float raw, float scale, int32_t key_mask) {
  const float scaled = StoredAs<T>(__fmul_rn(StoredAs<T>(raw), scale));
  return __fadd_rn(scaled, key_mask != 0 ? 0.0f : kPaddingKeyBias);
}

// One block per row of [B*heads*S, S]: in place, probs = softmax(biased scaled scores) (fp32,
// from the raw fp32 q k^T found there); dropped (unless null) = dropout(probs) rounded to T.
template <typename T>
__global__ void MaskedSoftmaxKernel(float* probs, T* dropped, const int32_t* key_mask,
                                    int64_t seq, int64_t rows_per_batch, float scale,
                                    AttentionDropout dropout) {
  __shared__ float shared[kRowWarps];
  const int64_t row = blockIdx.x;
  const int64_t first = row * seq;
  float* scores = probs + first;
  const int32_t* mask = key_mask + (row / rows_per_batch) * seq;
  float row_max = -INFINITY;
  for (int64_t j = threadIdx.x; j < seq; j += kRowThreads) {
    row_max = fmaxf(row_max, BiasedScore<T>(scores[j], scale, mask[j]));
  }
  row_max = RowReduce<kRowWarps>(row_max, MaxOp(), shared);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < seq; j += kRowThreads) {
    sum += expf(BiasedScore<T>(scores[j], scale, mask[j]) - row_max);
  }
  // Its __syncthreads also ends every read of the loops above before the writes below.
  sum = RowReduce<kRowWarps>(sum, SumOp(), shared);
  ForEachKeyOfRow(dropout, dropout.RowFirst(row), seq, [&](int64_t j, bool kept) {
    const float prob = expf(BiasedScore<T>(scores[j], scale, mask[j]) - row_max) / sum;
    scores[j] = prob;
    if (dropped != nullptr) dropped[first + j] = FromFloat<T>(Dropped(dropout, prob, kept));
  });
}

// One block per row, in place on `grads`, which holds d_dropped (the d_context v^T GEMM's
// output, already rounded to T) on entry and d_scores on exit, as the CPU computes them:
//   d_probs = dropout(d_dropped) (fp32);
//   d_scores = (P * (d_probs - rowsum(d_probs * P)) rounded, times scale) rounded.
// d_probs is recomputed in the second pass rather than stored (T cannot hold it exactly).
template <typename T>
__global__ void SoftmaxBackwardKernel(const float* __restrict__ probs, T* grads, int64_t seq,
                                      float scale, AttentionDropout dropout) {
  __shared__ float shared[kRowWarps];
  const int64_t row = blockIdx.x;
  const int64_t first = row * seq;
  const int64_t mask_first = dropout.RowFirst(row);
  const float* row_probs = probs + first;
  T* row_grads = grads + first;
  float dot = 0.0f;
  ForEachKeyOfRow(dropout, mask_first, seq, [&](int64_t j, bool kept) {
    dot += Dropped(dropout, ToFloat(row_grads[j]), kept) * row_probs[j];
  });
  dot = RowReduce<kRowWarps>(dot, SumOp(), shared);
  ForEachKeyOfRow(dropout, mask_first, seq, [&](int64_t j, bool kept) {
    const float d_probs = Dropped(dropout, ToFloat(row_grads[j]), kept);
    const float ds = __fmul_rn(row_probs[j], __fsub_rn(d_probs, dot));
    row_grads[j] = FromFloat<T>(__fmul_rn(StoredAs<T>(ds), scale));
  });
}

// dropped[i] = dropout(probs[i]) rounded to T, for the flat [B,heads,S,S] index i. With the
// stride S the mask index is i itself: one thread per Philox block of four elements, grid
// stride. With a longer stride a row's mask elements are not next to the following row's, so
// each thread takes one element and its own Philox call.
template <typename T>
__global__ void DropoutCastKernel(const float* __restrict__ probs, T* __restrict__ dropped,
                                  int64_t count, AttentionDropout dropout) {
  if (dropout.stride != dropout.seq) {
    for (int64_t i = GridStrideBegin(); i < count; i += GridStride()) {
      const int64_t index = dropout.RowFirst(i / dropout.seq) + i % dropout.seq;
      const unsigned kept = KeptLanes(dropout, index / 4);
      dropped[i] = FromFloat<T>(Dropped(dropout, probs[i], ((kept >> (index % 4)) & 1u) != 0));
    }
    return;
  }
  const int64_t blocks = (count + 3) / 4;
  for (int64_t block = GridStrideBegin(); block < blocks; block += GridStride()) {
    const unsigned kept = KeptLanes(dropout, block);
#pragma unroll
    for (int lane = 0; lane < 4; ++lane) {
      const int64_t i = block * 4 + lane;
      if (i >= count) break;
      dropped[i] = FromFloat<T>(Dropped(dropout, probs[i], ((kept >> lane) & 1u) != 0));
    }
  }
}

// out [outer, y, x, run] = in [outer, x, y, run] with the middle axes swapped, for runs of
// `run` contiguous Units (a byte copy, no arithmetic). One thread per output Unit, so writes are
// coalesced and reads are contiguous runs. Index is uint32_t whenever the count allows it: the
// index divisions then cost a fraction of 64-bit ones, which would dominate this copy.
template <typename Unit, typename Index>
__global__ void SwapMiddleAxesKernel(const Unit* __restrict__ in, Unit* __restrict__ out, Index x,
                                     Index y, Index run, Index count) {
  const Index stride = static_cast<Index>(GridStride());
  for (Index i = static_cast<Index>(GridStrideBegin()); i < count; i += stride) {
    const Index offset = i % run;
    const Index outer_y_x = i / run;
    const Index xi = outer_y_x % x;
    const Index outer_y = outer_y_x / x;
    const Index yi = outer_y % y;
    const Index outer = outer_y / y;
    out[i] = in[((outer * x + xi) * y + yi) * run + offset];
  }
}

// ---- Head-major copies and the batched GEMMs ----

float SoftmaxScale(const AttentionGeometry& g) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(g.head_dim)));
}

template <typename Unit>
void LaunchSwapMiddleAxes(const void* in, void* out, int64_t x, int64_t y, int64_t run,
                          int64_t count) {
  const Unit* from = static_cast<const Unit*>(in);
  Unit* to = static_cast<Unit*>(out);
  const int grid = GridStrideBlocks(count);
  // INT32_MAX, not UINT32_MAX: i + stride must not wrap around.
  if (count <= INT32_MAX) {
    SwapMiddleAxesKernel<Unit, uint32_t><<<grid, kThreadsPerBlock, 0, ComputeStream()>>>(
        from, to, static_cast<uint32_t>(x), static_cast<uint32_t>(y), static_cast<uint32_t>(run),
        static_cast<uint32_t>(count));
  } else {
    SwapMiddleAxesKernel<Unit, int64_t><<<grid, kThreadsPerBlock, 0, ComputeStream()>>>(
        from, to, x, y, run, count);
  }
  KERNEL_LAUNCH_CHECK();
}

// A new [outer, y, x, inner] tensor of `in`'s dtype holding `in` [outer, x, y, inner] with the
// middle axes swapped. Copied in the widest unit (16, 8, 4 or 2 bytes) that divides a run of
// `inner` elements and both pointers' alignments (e.g. 16 bytes for head_dim 64).
Tensor SwapMiddleAxes(const Tensor& in, int64_t outer, int64_t x, int64_t y, int64_t inner,
                      MemoryCategory category) {
  // One thread per output unit: the copy writes all out.bytes() (run_bytes divides them).
  Tensor out = Tensor::Empty({outer, y, x, inner}, in.dtype(), Device::kCuda, category);
  if (out.numel() == 0) return out;  // an empty grid is a launch error
  const int64_t run_bytes = inner * static_cast<int64_t>(SizeOf(in.dtype()));
  const uintptr_t alignment = reinterpret_cast<uintptr_t>(in.raw_data()) |
                              reinterpret_cast<uintptr_t>(out.raw_data()) |
                              static_cast<uintptr_t>(run_bytes);
  const int64_t total_bytes = static_cast<int64_t>(out.bytes());
  if (alignment % 16 == 0) {
    LaunchSwapMiddleAxes<uint4>(in.raw_data(), out.raw_data(), x, y, run_bytes / 16,
                                total_bytes / 16);
  } else if (alignment % 8 == 0) {
    LaunchSwapMiddleAxes<uint2>(in.raw_data(), out.raw_data(), x, y, run_bytes / 8,
                                total_bytes / 8);
  } else if (alignment % 4 == 0) {
    LaunchSwapMiddleAxes<uint32_t>(in.raw_data(), out.raw_data(), x, y, run_bytes / 4,
                                   total_bytes / 4);
  } else {
    XLMR_CHECK(alignment % 2 == 0) << "attention: " << DTypeName(in.dtype()) << " operand";
    LaunchSwapMiddleAxes<uint16_t>(in.raw_data(), out.raw_data(), x, y, run_bytes / 2,
                                   total_bytes / 2);
  }
  return out;
}

// [B, S, H] (HF's [B, S, heads, D]) -> a new head-major [B, heads, S, D] workspace tensor, in
// which the [S, D] matrix of every (sequence, head) is one constant stride from the next.
Tensor SplitHeads(const Tensor& x, const AttentionGeometry& g) {
  return SwapMiddleAxes(x, g.batch, g.seq, g.heads, g.head_dim, MemoryCategory::kWorkspace);
}

// Head-major [B, heads, S, D] -> a new [B, S, H] activation (the op's result).
Tensor MergeHeads(const Tensor& x_heads, const AttentionGeometry& g) {
  return SwapMiddleAxes(x_heads, g.batch, g.heads, g.seq, g.head_dim,
                        MemoryCategory::kActivations)
      .Reshaped({g.batch, g.seq, g.hidden});
}

// The [S, D] matrix of each (sequence, head) in a head-major [B, heads, S, D] tensor, and the
// [S, S] block of each in a [B, heads, S, S] tensor.
MatrixLayout HeadMatrices(const AttentionGeometry& g) {
  return {g.seq, g.head_dim, g.head_dim, g.seq * g.head_dim};
}
MatrixLayout ScoreMatrices(const AttentionGeometry& g) {
  return {g.seq, g.seq, g.seq, g.seq * g.seq};
}

// scores[b, h] = x_h y_h^T for head-major x, y of one dtype, as one GemmStridedBatched call over
// the B * heads pairs: fp32 accumulation, rounded once to the dtype of scores [B, heads, S, S].
void ScoresFromHeads(const Tensor& x_heads, const Tensor& y_heads, const AttentionGeometry& g,
                     Tensor* scores) {
  GemmStridedBatched(g.batch * g.heads, x_heads, HeadMatrices(g), Transpose::kNo, y_heads,
                     HeadMatrices(g), Transpose::kYes, 1.0f, 0.0f, scores, ScoreMatrices(g));
}

// The [B, S, H] activation whose head h of sequence b is op(scores[b, h]) x_h, for scores
// [B, heads, S, S] and head-major x of one dtype, as one GemmStridedBatched call over the
// B * heads pairs: fp32 accumulation, rounded once to x's dtype.
Tensor HeadsFromScores(const Tensor& scores, Transpose transpose_scores, const Tensor& x_heads,
                       const AttentionGeometry& g) {
  // The GEMM (beta = 0) writes every element: the [S, D] matrices tile the tensor exactly.
  Tensor product_heads = Tensor::Empty(x_heads.shape(), x_heads.dtype(), Device::kCuda,
                                       MemoryCategory::kWorkspace);
  GemmStridedBatched(g.batch * g.heads, scores, ScoreMatrices(g), transpose_scores, x_heads,
                     HeadMatrices(g), Transpose::kNo, 1.0f, 0.0f, &product_heads,
                     HeadMatrices(g));
  return MergeHeads(product_heads, g);
}

// ---- The [B, heads, S, S] buffers and the row kernels ----

// Empty: both users write every element before reading any: `dropped` is stored for every key
// of every row by the softmax, d_scores by the d_context v^T GEMM (beta = 0).
Tensor NewScores(const AttentionGeometry& g, DType dtype) {
  return Tensor::Empty({g.batch, g.heads, g.seq, g.seq}, dtype, Device::kCuda,
                       MemoryCategory::kWorkspace);
}

// The probabilities as the P*V products read them (dropout(probs) in q's dtype) are probs
// itself exactly when nothing changes them: f32 without dropout.
bool DroppedIsProbs(DType dtype, const AttentionDropout& dropout) {
  return dtype == DType::kF32 && dropout.p == 0.0f;
}

int RowGrid(const AttentionGeometry& g) {
  XLMR_CHECK(g.rows() <= INT_MAX) << "attention: " << g.rows() << " rows of scores";
  return static_cast<int>(g.rows());
}

template <typename T>
void LaunchMaskedSoftmax(const AttentionGeometry& g, const Tensor& key_mask,
                         const AttentionDropout& dropout, Tensor* probs, Tensor* dropped) {
  T* dropped_data = dropped->raw_data() == probs->raw_data()
                        ? nullptr
                        : static_cast<T*>(dropped->raw_data());
  MaskedSoftmaxKernel<T><<<RowGrid(g), kRowThreads, 0, ComputeStream()>>>(
      probs->data<float>(), dropped_data, key_mask.data<int32_t>(), g.seq, g.heads * g.seq,
      SoftmaxScale(g), dropout);
  KERNEL_LAUNCH_CHECK();
}

template <typename T>
void LaunchSoftmaxBackward(const AttentionGeometry& g, const Tensor& probs,
                           const AttentionDropout& dropout, Tensor* grads) {
  SoftmaxBackwardKernel<T><<<RowGrid(g), kRowThreads, 0, ComputeStream()>>>(
      probs.data<float>(), static_cast<T*>(grads->raw_data()), g.seq, SoftmaxScale(g), dropout);
  KERNEL_LAUNCH_CHECK();
}

// dropout(probs) in `dtype`: probs itself when that changes nothing, else a new workspace tensor.
Tensor DroppedProbs(const Tensor& probs, DType dtype, const AttentionDropout& dropout) {
  if (DroppedIsProbs(dtype, dropout)) return probs;
  // The kernel stores every element, dropped ones as an explicit 0.
  Tensor dropped = Tensor::Empty(probs.shape(), dtype, Device::kCuda, MemoryCategory::kWorkspace);
  const int64_t count = probs.numel();
  const int grid = GridStrideBlocks(dropout.stride == dropout.seq ? (count + 3) / 4 : count);
  if (dtype == DType::kF16) {
    DropoutCastKernel<__half><<<grid, kThreadsPerBlock, 0, ComputeStream()>>>(
        probs.data<float>(), static_cast<__half*>(dropped.raw_data()), count, dropout);
  } else if (dtype == DType::kBF16) {
    DropoutCastKernel<__nv_bfloat16><<<grid, kThreadsPerBlock, 0, ComputeStream()>>>(
        probs.data<float>(), static_cast<__nv_bfloat16*>(dropped.raw_data()), count, dropout);
  } else {
    DropoutCastKernel<float><<<grid, kThreadsPerBlock, 0, ComputeStream()>>>(
        probs.data<float>(), dropped.data<float>(), count, dropout);
  }
  KERNEL_LAUNCH_CHECK();
  return dropped;
}

// Zeros, for the results of the empty problems (rows() == 0), which no kernel writes.
Tensor NewActivation(const Shape& shape, DType dtype) {
  return Tensor::Zeros(shape, dtype, Device::kCuda, MemoryCategory::kActivations);
}

}  // namespace

// Head-major copies are temporaries freed as soon as the GEMM that reads them is queued: the
// allocator frees in stream order (cudaFreeAsync on the compute stream), so the memory is
// reused only after that GEMM, and at most two copies are alive at any time.
void AttentionForward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_mask,
                      int num_heads, float dropout_p, const DropoutKey& dropout_key,
                      int64_t dropout_stride, Tensor* context, Tensor* probs) {
  const AttentionGeometry g = AttentionGeometryOf(q, num_heads);
  const DType dtype = q.dtype();
  // Empty: written whole by the q k^T GEMM (beta = 0) below, then rewritten in place by the
  // softmax; with rows() == 0 it has no elements.
  *probs = Tensor::Empty({g.batch, g.heads, g.seq, g.seq}, DType::kF32, Device::kCuda,
                         MemoryCategory::kActivations);
  if (g.rows() == 0) {  // an empty grid is a launch error
    *context = NewActivation(q.shape(), dtype);
    return;
  }
  const AttentionDropout dropout = MakeDropout(dropout_p, dropout_key, g, dropout_stride);
  // The raw q_h k_h^T in f32, straight into probs (the softmax rounds and scales it in place).
  ScoresFromHeads(SplitHeads(q, g), SplitHeads(k, g), g, probs);
  Tensor dropped = DroppedIsProbs(dtype, dropout) ? *probs : NewScores(g, dtype);
  if (dtype == DType::kF16) {
    LaunchMaskedSoftmax<__half>(g, key_mask, dropout, probs, &dropped);
  } else if (dtype == DType::kBF16) {
    LaunchMaskedSoftmax<__nv_bfloat16>(g, key_mask, dropout, probs, &dropped);
  } else {
    LaunchMaskedSoftmax<float>(g, key_mask, dropout, probs, &dropped);
  }
  *context = HeadsFromScores(dropped, Transpose::kNo, SplitHeads(v, g), g);
}

void AttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k, const Tensor& v,
                       const Tensor& probs, int num_heads, float dropout_p,
                       const DropoutKey& dropout_key, int64_t dropout_stride, Tensor* dq,
                       Tensor* dk, Tensor* dv) {
  const AttentionGeometry g = AttentionGeometryOf(q, num_heads);
  const DType dtype = q.dtype();
  if (g.rows() == 0) {  // an empty grid is a launch error
    *dq = NewActivation(q.shape(), dtype);
    *dk = NewActivation(q.shape(), dtype);
    *dv = NewActivation(q.shape(), dtype);
    return;
  }
  const AttentionDropout dropout = MakeDropout(dropout_p, dropout_key, g, dropout_stride);
  // Holds d_dropped = d_context_h v_h^T (rounded once to q's dtype) until the softmax backward
  // turns it into d_scores in place.
  Tensor d_scores = NewScores(g, dtype);
  {
    const Tensor d_context_heads = SplitHeads(d_context, g);
    ScoresFromHeads(d_context_heads, SplitHeads(v, g), g, &d_scores);
    // dv_h = dropped^T d_context_h.
    *dv = HeadsFromScores(DroppedProbs(probs, dtype, dropout), Transpose::kYes, d_context_heads,
                          g);
  }
  if (dtype == DType::kF16) {
    LaunchSoftmaxBackward<__half>(g, probs, dropout, &d_scores);
  } else if (dtype == DType::kBF16) {
    LaunchSoftmaxBackward<__nv_bfloat16>(g, probs, dropout, &d_scores);
  } else {
    LaunchSoftmaxBackward<float>(g, probs, dropout, &d_scores);
  }
  // dq_h = d_scores k_h;  dk_h = d_scores^T q_h.
  *dq = HeadsFromScores(d_scores, Transpose::kNo, SplitHeads(k, g), g);
  *dk = HeadsFromScores(d_scores, Transpose::kYes, SplitHeads(q, g), g);
}

}  // namespace xlmr::kernels::cuda
