#include "kernels/cuda/attention.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>

#include "framework/core/check.h"
#include "framework/random/philox.h"
#include "kernels/cpu/dropout.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"
#include "kernels/cuda/philox_device.cuh"
#include "kernels/cuda/row_reduce.cuh"

namespace xlmr::kernels::cuda {
namespace {

// torch.finfo(torch.float32).min: the additive mask Hugging Face puts on padding keys. Adding
// it (rather than writing -inf) keeps a fully padded row finite: it softmaxes to uniform.
constexpr float kPaddingKeyBias = -3.4028234663852886e38f;

// One block of kRowThreads threads per row of scores; each thread strides over the keys.
constexpr int kRowThreads = 128;
constexpr int kRowWarps = kRowThreads / 32;
constexpr int kElementThreads = 256;
constexpr int kElementBlocksPerMultiprocessor = 8;

// ---- Attention dropout: the Philox mask of framework/random/philox.h ----

struct AttentionDropout {
  float p = 0.0f;           // 0: no dropout (the mask is never generated)
  float keep_scale = 1.0f;  // kernels/cpu DropoutScale(p): 1 / (1 - p) rounded to fp32
  DropoutSite site{};       // the Philox key and upper counter words of the DropoutKey
};

// `value` through the dropout of flat element `index`: scaled in fp32 where kept, else 0
// (kept iff DropoutUniform(key, index) >= p, as the CPU backend).
__device__ __forceinline__ float ApplyDropout(const AttentionDropout& dropout, int64_t index,
                                              float value) {
  if (dropout.p == 0.0f) return value;
  const uint4 words = DropoutBlockWords(dropout.site, static_cast<uint32_t>(index >> 2));
  const int word = static_cast<int>(index & 3);
  const uint32_t bits = word == 0 ? words.x : word == 1 ? words.y : word == 2 ? words.z : words.w;
  return UniformFromWordDevice(bits) >= dropout.p ? __fmul_rn(value, dropout.keep_scale) : 0.0f;
}

AttentionDropout MakeDropout(float p, const DropoutKey& key, int64_t elements) {
  AttentionDropout dropout;
  if (p == 0.0f) return dropout;
  XLMR_CHECK(elements <= kMaxDropoutElements)
      << "attention dropout over " << elements << " elements exceeds the Philox counter";
  dropout.p = p;
  dropout.keep_scale = cpu::DropoutScale(p);
  dropout.site = DropoutSiteOf(key);  // also checks the layer/op ranges
  return dropout;
}

// ---- fp32 compute, storage of T ----

__device__ __forceinline__ float ToFloat(float value) { return value; }
__device__ __forceinline__ float ToFloat(__half value) { return __half2float(value); }
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
// `value` after a round trip through storage of T (torch's fp16 intermediates).
template <typename T>
__device__ __forceinline__ float StoredAs(float value) {
  return ToFloat(FromFloat<T>(value));
}


// Score of key j: ((q k^T) rounded, times scale, rounded) plus the key bias, as the CPU does.
template <typename T>
__device__ __forceinline__ float BiasedScore(float raw, float scale, int32_t key_mask) {
  const float scaled = StoredAs<T>(__fmul_rn(StoredAs<T>(raw), scale));
  return __fadd_rn(scaled, key_mask != 0 ? 0.0f : kPaddingKeyBias);
}

// One block per row of [B*heads*S, S]: in place, probs = softmax(biased scaled scores) (fp32);
// dropped (unless null) = dropout(probs) rounded to T.
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
  sum = RowReduce<kRowWarps>(sum, SumOp(), shared);  // its __syncthreads also orders reads before writes
  for (int64_t j = threadIdx.x; j < seq; j += kRowThreads) {
    const float prob = expf(BiasedScore<T>(scores[j], scale, mask[j]) - row_max) / sum;
    scores[j] = prob;
    if (dropped != nullptr) {
      dropped[first + j] = FromFloat<T>(ApplyDropout(dropout, first + j, prob));
    }
  }
}

// One block per row: d_scores = (P * (D - rowsum(D * P)) rounded, times scale) rounded, where
// D = dropout(d_dropped rounded to T). `scratch` holds d_dropped (f32) on entry and D after;
// d_scores may alias it when T is float (each element is read and written by one thread).
template <typename T>
__global__ void SoftmaxBackwardKernel(const float* probs, float* scratch, T* d_scores,
                                      int64_t seq, float scale, AttentionDropout dropout) {
  __shared__ float shared[kRowWarps];
  const int64_t first = static_cast<int64_t>(blockIdx.x) * seq;
  float dot = 0.0f;
  for (int64_t j = threadIdx.x; j < seq; j += kRowThreads) {
    const float d = ApplyDropout(dropout, first + j, StoredAs<T>(scratch[first + j]));
    scratch[first + j] = d;
    dot += d * probs[first + j];
  }
  dot = RowReduce<kRowWarps>(dot, SumOp(), shared);
  for (int64_t j = threadIdx.x; j < seq; j += kRowThreads) {
    const float ds = __fmul_rn(probs[first + j], __fsub_rn(scratch[first + j], dot));
    d_scores[first + j] = FromFloat<T>(__fmul_rn(StoredAs<T>(ds), scale));
  }
}

// dropped[i] = dropout(probs[i]) rounded to T, for the flat [B,heads,S,S] index i.
template <typename T>
__global__ void DropoutCastKernel(const float* probs, T* dropped, int64_t count,
                                  AttentionDropout dropout) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    dropped[i] = FromFloat<T>(ApplyDropout(dropout, i, probs[i]));
  }
}

// ---- Geometry and batched GEMMs ----

struct Geometry {
  int64_t batch, seq, hidden, heads, head_dim;
  int64_t rows() const { return batch * heads * seq; }
  int64_t probs_elements() const { return rows() * seq; }
};

Geometry GeometryOf(const Tensor& q, int num_heads) {
  return {q.dim(0), q.dim(1), q.dim(2), num_heads, q.dim(2) / num_heads};
}

float SoftmaxScale(const Geometry& g) {
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(g.head_dim)));
}

cudaDataType CudaTypeOf(DType dtype) { return dtype == DType::kF16 ? CUDA_R_16F : CUDA_R_32F; }

// The heads of one batch row as a batch of matrices: [B,S,H] gives `heads` matrices [S, d]
// (row stride H, head_dim apart); [B,heads,S,S] gives `heads` matrices [S, S] (S*S apart).
struct Matrices {
  void* data;
  cudaDataType type;
  int ld;
  long long stride;
};

Matrices HeadsOf(const Tensor& t, int64_t b, const Geometry& g) {
  char* base = static_cast<char*>(t.raw_data()) + b * g.seq * g.hidden * SizeOf(t.dtype());
  return {base, CudaTypeOf(t.dtype()), static_cast<int>(g.hidden), g.head_dim};
}

Matrices BlocksOf(const Tensor& t, int64_t b, const Geometry& g) {
  char* base = static_cast<char*>(t.raw_data()) + b * g.heads * g.seq * g.seq * SizeOf(t.dtype());
  return {base, CudaTypeOf(t.dtype()), static_cast<int>(g.seq), g.seq * g.seq};
}

// One cuBLAS handle for the process, bound to the compute stream at every use.
// TODO(dedupe): belongs in CudaContext next to the cuBLASLt handle.
cublasHandle_t CublasOnComputeStream() {
  static cublasHandle_t handle = [] {
    cublasHandle_t created = nullptr;
    CUBLAS_CHECK(cublasCreate(&created));
    // No TF32, and no fp16 partial sums when splitting K: fp32 accumulation, one rounding.
    CUBLAS_CHECK(cublasSetMathMode(created, static_cast<cublasMath_t>(
                                                CUBLAS_DEFAULT_MATH |
                                                CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    return created;
  }();
  CUBLAS_CHECK(cublasSetStream(handle, CudaContext::Current().compute_stream()));
  return handle;
}

// Row-major c[i] = op(a[i]) op(b[i]) ([m,k] x [k,n]) for i < heads, fp32 accumulation, one
// rounding to c's type. cuBLAS is column-major, so this computes c^T = op(b)^T op(a)^T.
void RowMajorHeadsGemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                       const Matrices& a, const Matrices& b, const Matrices& c, int64_t heads) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      CublasOnComputeStream(), transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
      transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(m),
      static_cast<int>(k), &alpha, b.data, b.type, b.ld, b.stride, a.data, a.type, a.ld, a.stride,
      &beta, c.data, c.type, c.ld, c.stride, static_cast<int>(heads), CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT))
      << "m=" << m << " n=" << n << " k=" << k << " heads=" << heads;
}

int RowGrid(const Geometry& g) {
  XLMR_CHECK(g.rows() <= INT_MAX) << "attention: " << g.rows() << " rows of scores";
  return static_cast<int>(g.rows());
}

int ElementGrid(int64_t count) {
  const int64_t needed = (count + kElementThreads - 1) / kElementThreads;
  const int64_t resident = static_cast<int64_t>(CudaContext::Current().multiprocessor_count()) *
                           kElementBlocksPerMultiprocessor;
  return static_cast<int>(std::min(needed, resident));
}

template <typename T>
void LaunchMaskedSoftmax(const Geometry& g, const Tensor& key_mask, const AttentionDropout& dropout,
                         Tensor* probs, Tensor* dropped) {
  T* dropped_data = dropped->raw_data() == probs->raw_data()
                        ? nullptr
                        : static_cast<T*>(dropped->raw_data());
  MaskedSoftmaxKernel<T><<<RowGrid(g), kRowThreads, 0, CudaContext::Current().compute_stream()>>>(
      probs->data<float>(), dropped_data, key_mask.data<int32_t>(), g.seq, g.heads * g.seq,
      SoftmaxScale(g), dropout);
  KERNEL_LAUNCH_CHECK();
}

template <typename T>
void LaunchSoftmaxBackward(const Geometry& g, const Tensor& probs, const AttentionDropout& dropout,
                           Tensor* scratch, Tensor* d_scores) {
  SoftmaxBackwardKernel<T><<<RowGrid(g), kRowThreads, 0, CudaContext::Current().compute_stream()>>>(
      probs.data<float>(), scratch->data<float>(), static_cast<T*>(d_scores->raw_data()), g.seq,
      SoftmaxScale(g), dropout);
  KERNEL_LAUNCH_CHECK();
}

// The probabilities as the P*V GEMM reads them (after dropout, in `dtype`): probs itself when
// nothing changes them (f32, no dropout), else a new workspace tensor filled by `fill`.
Tensor DroppedBuffer(const Tensor& probs, DType dtype, float dropout_p) {
  if (dtype == DType::kF32 && dropout_p == 0.0f) return probs;
  return Tensor::Zeros(probs.shape(), dtype, Device::kCuda, MemoryCategory::kWorkspace);
}

void FillDropped(const Tensor& probs, const AttentionDropout& dropout, Tensor* dropped) {
  if (dropped->raw_data() == probs.raw_data()) return;
  const int64_t count = probs.numel();
  cudaStream_t stream = CudaContext::Current().compute_stream();
  if (dropped->dtype() == DType::kF16) {
    DropoutCastKernel<__half><<<ElementGrid(count), kElementThreads, 0, stream>>>(
        probs.data<float>(), static_cast<__half*>(dropped->raw_data()), count, dropout);
  } else {
    DropoutCastKernel<float><<<ElementGrid(count), kElementThreads, 0, stream>>>(
        probs.data<float>(), dropped->data<float>(), count, dropout);
  }
  KERNEL_LAUNCH_CHECK();
}

Tensor NewActivation(const Shape& shape, DType dtype) {
  return Tensor::Zeros(shape, dtype, Device::kCuda, MemoryCategory::kActivations);
}

}  // namespace

void AttentionForward(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& key_mask,
                      int num_heads, float dropout_p, const DropoutKey& dropout_key,
                      Tensor* context, Tensor* probs) {
  const Geometry g = GeometryOf(q, num_heads);
  const DType dtype = q.dtype();
  *probs = NewActivation({g.batch, g.heads, g.seq, g.seq}, DType::kF32);
  *context = NewActivation(q.shape(), dtype);
  if (g.rows() == 0) return;  // an empty grid is a launch error
  // scores[b, h] = q_h k_h^T in f32, written straight into probs (the softmax is in place).
  for (int64_t b = 0; b < g.batch; ++b) {
    RowMajorHeadsGemm(false, true, g.seq, g.seq, g.head_dim, HeadsOf(q, b, g), HeadsOf(k, b, g),
                      BlocksOf(*probs, b, g), g.heads);
  }
  Tensor dropped = DroppedBuffer(*probs, dtype, dropout_p);
  const AttentionDropout dropout = MakeDropout(dropout_p, dropout_key, g.probs_elements());
  if (dtype == DType::kF16) {
    LaunchMaskedSoftmax<__half>(g, key_mask, dropout, probs, &dropped);
  } else {
    LaunchMaskedSoftmax<float>(g, key_mask, dropout, probs, &dropped);
  }
  // context_h = dropped v_h, accumulated in fp32, rounded once to q's dtype.
  for (int64_t b = 0; b < g.batch; ++b) {
    RowMajorHeadsGemm(false, false, g.seq, g.head_dim, g.seq, BlocksOf(dropped, b, g),
                      HeadsOf(v, b, g), HeadsOf(*context, b, g), g.heads);
  }
}

void AttentionBackward(const Tensor& d_context, const Tensor& q, const Tensor& k, const Tensor& v,
                       const Tensor& probs, int num_heads, float dropout_p,
                       const DropoutKey& dropout_key, Tensor* dq, Tensor* dk, Tensor* dv) {
  const Geometry g = GeometryOf(q, num_heads);
  const DType dtype = q.dtype();
  *dq = NewActivation(q.shape(), dtype);
  *dk = NewActivation(q.shape(), dtype);
  *dv = NewActivation(q.shape(), dtype);
  if (g.rows() == 0) return;
  const AttentionDropout dropout = MakeDropout(dropout_p, dropout_key, g.probs_elements());
  Tensor dropped = DroppedBuffer(probs, dtype, dropout_p);
  FillDropped(probs, dropout, &dropped);
  // scratch = d_dropped = d_context_h v_h^T in f32 (the kernel below rounds it to q's dtype).
  Tensor scratch = Tensor::Zeros(probs.shape(), DType::kF32, Device::kCuda,
                                 MemoryCategory::kWorkspace);
  for (int64_t b = 0; b < g.batch; ++b) {
    RowMajorHeadsGemm(false, true, g.seq, g.seq, g.head_dim, HeadsOf(d_context, b, g),
                      HeadsOf(v, b, g), BlocksOf(scratch, b, g), g.heads);
    // dv_h = dropped^T d_context_h.
    RowMajorHeadsGemm(true, false, g.seq, g.head_dim, g.seq, BlocksOf(dropped, b, g),
                      HeadsOf(d_context, b, g), HeadsOf(*dv, b, g), g.heads);
  }
  Tensor d_scores = dtype == DType::kF32 ? scratch
                                          : Tensor::Zeros(probs.shape(), dtype, Device::kCuda,
                                                          MemoryCategory::kWorkspace);
  if (dtype == DType::kF16) {
    LaunchSoftmaxBackward<__half>(g, probs, dropout, &scratch, &d_scores);
  } else {
    LaunchSoftmaxBackward<float>(g, probs, dropout, &scratch, &d_scores);
  }
  // dq_h = d_scores k_h;  dk_h = d_scores^T q_h.
  for (int64_t b = 0; b < g.batch; ++b) {
    RowMajorHeadsGemm(false, false, g.seq, g.head_dim, g.seq, BlocksOf(d_scores, b, g),
                      HeadsOf(k, b, g), HeadsOf(*dq, b, g), g.heads);
    RowMajorHeadsGemm(true, false, g.seq, g.head_dim, g.seq, BlocksOf(d_scores, b, g),
                      HeadsOf(q, b, g), HeadsOf(*dk, b, g), g.heads);
  }
}

}  // namespace xlmr::kernels::cuda
