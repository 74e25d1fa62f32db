#include "kernels/cuda/loss.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>

#include "framework/core/check.h"
#include "kernels/common/cosent.h"
#include "kernels/common/label_smoothing.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"
#include "kernels/cuda/row_reduce.cuh"

namespace xlmr::kernels::cuda {
namespace {

// The label value that excludes a row (torch's default ignore_index).
constexpr int32_t kIgnoreIndex = -100;

constexpr int kRowThreads = 128;  // one block per row of logits
constexpr int kRowWarps = kRowThreads / 32;
constexpr int kSumThreads = 256;  // a power of two: the tree reduction halves it
constexpr int64_t kMaxPartialSums = 1024;
constexpr int kElementThreads = 256;
constexpr int kElementBlocksPerMultiprocessor = 8;

__device__ __forceinline__ float ToFloat(float value) { return value; }
__device__ __forceinline__ float ToFloat(__half value) { return __half2float(value); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 value) { return __bfloat162float(value); }

// ---- Row softmax statistics (cross-entropy) ----


// log_softmax(x)_j = (x_j - max) - log_sum, as torch computes it. Every thread of the block
// must call RowLogSoftmax (it synchronises).
struct LogSoftmaxStats {
  float max;
  float log_sum;
  __device__ float LogProb(float x) const { return (x - max) - log_sum; }
};

template <typename T>
__device__ LogSoftmaxStats RowLogSoftmax(const T* row, int64_t classes, float* shared) {
  float row_max = -INFINITY;
  for (int64_t j = threadIdx.x; j < classes; j += kRowThreads) {
    row_max = fmaxf(row_max, ToFloat(row[j]));
  }
  row_max = RowReduce<kRowWarps>(row_max, MaxOp(), shared);
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < classes; j += kRowThreads) {
    sum += expf(ToFloat(row[j]) - row_max);
  }
  sum = RowReduce<kRowWarps>(sum, SumOp(), shared);
  return {row_max, logf(sum)};
}

// The label of `row`; traps (fatal, after printing) when it is neither -100 nor in [0, C).
__device__ int32_t CheckedLabel(const int32_t* labels, int64_t row, int64_t classes) {
  const int32_t label = labels[row];
  if (label != kIgnoreIndex && (label < 0 || label >= classes)) {
    if (threadIdx.x == 0) {
      printf("cross-entropy: label %d of row %lld outside [0, %lld) and not %d\n", label,
             static_cast<long long>(row), static_cast<long long>(classes), kIgnoreIndex);
    }
    __trap();
  }
  return label;
}

// sum_j -log_softmax(x)_j over the row (label smoothing's uniform term times C), per-thread
// partial sums reduced in fp32. Every thread of the block must call it (it synchronises).
template <typename T>
__device__ float RowNegativeLogProbSum(const T* row, int64_t classes, LogSoftmaxStats stats,
                                       float* shared) {
  float sum = 0.0f;
  for (int64_t j = threadIdx.x; j < classes; j += kRowThreads) sum -= stats.LogProb(ToFloat(row[j]));
  return RowReduce<kRowWarps>(sum, SumOp(), shared);
}

// One block per row: row_loss[row] = (1 - e) * (-log_softmax(row)[label]) + e / C * the row's
// sum of -log_softmax (just the first term when e = 0), 0 for ignored rows.
template <typename T>
__global__ void CrossEntropyRowKernel(const T* logits, const int32_t* labels, int64_t classes,
                                      float label_smoothing, float* row_loss) {
  __shared__ float shared[kRowWarps];
  const int64_t row = blockIdx.x;
  const int32_t label = CheckedLabel(labels, row, classes);
  if (label == kIgnoreIndex) {  // uniform over the block: no thread reaches a barrier
    if (threadIdx.x == 0) row_loss[row] = 0.0f;
    return;
  }
  const T* x = logits + row * classes;
  const LogSoftmaxStats stats = RowLogSoftmax(x, classes, shared);
  float loss = -stats.LogProb(ToFloat(x[label]));
  if (label_smoothing != 0.0f) {  // uniform over the block, like the ignored-row test
    const float uniform = RowNegativeLogProbSum(x, classes, stats, shared) / static_cast<float>(classes);
    loss = __fadd_rn(__fmul_rn(1.0f - label_smoothing, loss), __fmul_rn(label_smoothing, uniform));
  }
  if (threadIdx.x == 0) row_loss[row] = loss;
}

// One block per row: d[row] = scale * softmax(row) - uniform, minus one_hot at the label
// (kernels/common/label_smoothing.h, formed here from the scale the kernel reads); ignored rows
// untouched.
template <typename T>
__global__ void CrossEntropyBackwardKernel(const T* logits, const int32_t* labels,
                                           int64_t classes, float label_smoothing,
                                           GradientScaleSource scale_source, float* d) {
  __shared__ float shared[kRowWarps];
  const int64_t row = blockIdx.x;
  const int32_t label = CheckedLabel(labels, row, classes);
  if (label == kIgnoreIndex) return;
  const float scale = scale_source.Resolve();
  const SmoothedTargetWeights targets = SmoothedTargets(scale, label_smoothing, classes);
  const float uniform = targets.uniform;
  const float one_hot = targets.one_hot;
  const T* x = logits + row * classes;
  const LogSoftmaxStats stats = RowLogSoftmax(x, classes, shared);
  for (int64_t j = threadIdx.x; j < classes; j += kRowThreads) {
    float grad = __fsub_rn(__fmul_rn(scale, expf(stats.LogProb(ToFloat(x[j])))), uniform);
    if (j == label) grad -= one_hot;  // torch's log_softmax backward of the targets' gradient
    d[row * classes + j] = grad;
  }
}

// ---- Deterministic sum of per-term losses ----

// A partial sum of terms and how many were counted; 16 bytes, stored in an i64 tensor.
struct Partial {
  double sum;
  long long count;
};

struct Term {
  float value;
  int counted;
};

struct CrossEntropyTerm {
  const float* row_loss;
  const int32_t* labels;
  __device__ Term operator()(int64_t i) const {
    return {row_loss[i], labels[i] != kIgnoreIndex ? 1 : 0};
  }
};

template <typename T>
struct MseTerm {
  const T* predictions;
  const float* targets;
  __device__ Term operator()(int64_t i) const {
    const float diff = ToFloat(predictions[i]) - targets[i];
    return {__fmul_rn(diff, diff), 1};
  }
};

template <typename T>
struct BceTerm {
  const T* logits;
  const float* targets;
  __device__ Term operator()(int64_t i) const {
    const float x = ToFloat(logits[i]);
    // The stable form: never exponentiates a positive number.
    const float linear = __fsub_rn(fmaxf(x, 0.0f), __fmul_rn(x, targets[i]));
    return {linear + log1pf(expf(-fabsf(x))), 1};
  }
};

// Block-wide tree sum of (sum, count) in shared memory; thread 0 ends with the total.
__device__ Partial TreeSum(Partial mine, Partial* shared) {
  shared[threadIdx.x] = mine;
  __syncthreads();
  for (int half = kSumThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      shared[threadIdx.x].sum += shared[threadIdx.x + half].sum;
      shared[threadIdx.x].count += shared[threadIdx.x + half].count;
    }
    __syncthreads();
  }
  return shared[0];
}

// partials[blockIdx.x] = sum of term(i) over the block's grid-stride share of [0, n).
template <typename TermFn>
__global__ void PartialSumKernel(TermFn term, int64_t n, Partial* partials) {
  __shared__ Partial shared[kSumThreads];
  Partial mine{0.0, 0};
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kSumThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kSumThreads + threadIdx.x; i < n;
       i += stride) {
    const Term t = term(i);
    mine.sum += static_cast<double>(t.value);
    mine.count += t.counted;
  }
  const Partial total = TreeSum(mine, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// One block: partials[count] = the sum of partials[0, count), and *add_to += its sum when
// add_to is not null.
__global__ void FinalSumKernel(Partial* partials, int64_t count, double* add_to) {
  __shared__ Partial shared[kSumThreads];
  Partial mine{0.0, 0};
  for (int64_t i = threadIdx.x; i < count; i += kSumThreads) {
    mine.sum += partials[i].sum;
    mine.count += partials[i].count;
  }
  const Partial total = TreeSum(mine, shared);
  if (threadIdx.x == 0) {
    partials[count] = total;
    if (add_to != nullptr) *add_to += total.sum;
  }
}

// The sum of term(i) for i in [0, n) queued on the compute stream: its partials and the total
// (at index `blocks`, returned in *blocks_out) in the returned workspace, *add_to += the sum
// when add_to is not null. Nothing waits.
template <typename TermFn>
Tensor QueueSum(TermFn term, int64_t n, double* add_to, int64_t* blocks_out) {
  cudaStream_t stream = CudaContext::Current().compute_stream();
  const int64_t blocks = std::min((n + kSumThreads - 1) / kSumThreads, kMaxPartialSums);
  static_assert(sizeof(Partial) == 2 * sizeof(int64_t), "Partial is stored as two i64");
  // Each of the `blocks` partials is stored by its block, the total by FinalSumKernel.
  Tensor storage = Tensor::Empty({2 * (blocks + 1)}, DType::kI64, Device::kCuda,
                                 MemoryCategory::kWorkspace);
  Partial* partials = static_cast<Partial*>(storage.raw_data());
  PartialSumKernel<<<static_cast<int>(blocks), kSumThreads, 0, stream>>>(term, n, partials);
  KERNEL_LAUNCH_CHECK();
  FinalSumKernel<<<1, kSumThreads, 0, stream>>>(partials, blocks, add_to);
  KERNEL_LAUNCH_CHECK();
  *blocks_out = blocks;
  return storage;
}

// Sum of term(i) for i in [0, n), on the compute stream, waited for and returned.
template <typename TermFn>
LossTotals SumTerms(TermFn term, int64_t n) {
  if (n == 0) return {};
  cudaStream_t stream = CudaContext::Current().compute_stream();
  int64_t blocks = 0;
  const Tensor storage = QueueSum(term, n, /*add_to=*/nullptr, &blocks);
  Partial total{0.0, 0};
  CUDA_CHECK(cudaMemcpyAsync(&total, static_cast<const Partial*>(storage.raw_data()) + blocks,
                             sizeof(Partial), cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream)) << "(summing a loss)";
  return {total.sum, static_cast<int64_t>(total.count)};
}

// ---- Elementwise gradients ----

template <typename T, typename GradFn>
__global__ void ElementGradKernel(const T* inputs, const float* targets, int64_t n, GradFn grad,
                                  float* d) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride) {
    d[i] = grad(ToFloat(inputs[i]), targets[i]);
  }
}

struct MseGrad {
  GradientScaleSource scale;
  __device__ float operator()(float p, float t) const {
    const float factor = 2.0f * scale.Resolve();  // torch folds the 2 into the incoming gradient
    return __fmul_rn(factor, p - t);
  }
};

struct BceGrad {
  GradientScaleSource scale;
  __device__ float operator()(float x, float t) const {
    const float sigmoid = 1.0f / (1.0f + expf(-x));
    return __fmul_rn(sigmoid - t, scale.Resolve());
  }
};

template <typename T, typename GradFn>
Tensor LaunchElementGrad(const Tensor& inputs, const Tensor& targets, GradFn grad) {
  Tensor d =
      Tensor::Empty(inputs.shape(), DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  const int64_t n = inputs.numel();
  if (n == 0) return d;
  const int64_t needed = (n + kElementThreads - 1) / kElementThreads;
  const int64_t resident = static_cast<int64_t>(CudaContext::Current().multiprocessor_count()) *
                           kElementBlocksPerMultiprocessor;
  ElementGradKernel<<<static_cast<int>(std::min(needed, resident)), kElementThreads, 0,
                      CudaContext::Current().compute_stream()>>>(
      static_cast<const T*>(inputs.raw_data()), targets.data<float>(), n, grad,
      d.data<float>());
  KERNEL_LAUNCH_CHECK();
  return d;
}

// ---- CoSENT (kernels/common/cosent.h) ----

constexpr int kCosentThreads = 256;  // one block; a power of two: the max tree halves it

// One block over the whole batch: m (the rows' maxima, reduced in a tree: a max is exact in any
// order), row_sums[i] for every row i in parallel, then in thread 0 P in CosentPairSum's order;
// stats[0] = m, stats[1] = P, and the loss into *loss_out and onto *add_to where not null.
__global__ void CosentStatsKernel(const float* scores, const float* labels, int64_t n, double* row_sums,
                                  double* stats, double* loss_out, double* add_to) {
  __shared__ double maxima[kCosentThreads];
  double mine = 0.0;
  for (int64_t i = threadIdx.x; i < n; i += kCosentThreads) mine = fmax(mine, CosentRowMax(scores, labels, n, i));
  maxima[threadIdx.x] = mine;
  __syncthreads();
  for (int half = kCosentThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) maxima[threadIdx.x] = fmax(maxima[threadIdx.x], maxima[threadIdx.x + half]);
    __syncthreads();
  }
  const double m = maxima[0];
  for (int64_t i = threadIdx.x; i < n; i += kCosentThreads) row_sums[i] = CosentRowSum(scores, labels, n, i, m);
  __syncthreads();  // the block's global writes are visible to thread 0 past the barrier
  if (threadIdx.x != 0) return;
  CosentStats total;
  total.max = m;
  total.pair_sum = CosentPairSum(row_sums, n);
  stats[0] = total.max;
  stats[1] = total.pair_sum;
  const double loss = total.Loss();
  if (loss_out != nullptr) *loss_out = loss;
  if (add_to != nullptr) *add_to += loss;
}

// A thread per score k: d[k] = CosentScoreGradient at the stats CosentStatsKernel left.
__global__ void CosentBackwardKernel(const float* scores, const float* labels, int64_t n, const double* stats,
                                     GradientScaleSource scale, float* d) {
  const int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= n) return;
  CosentStats total;
  total.max = stats[0];
  total.pair_sum = stats[1];
  d[k] = CosentScoreGradient(scores, labels, n, k, total, scale.Resolve());
}

// Queues CosentStatsKernel for n > 0 scores: the returned workspace holds [m, P, loss, row sums].
Tensor QueueCosentStats(const Tensor& scores, const Tensor& labels, double* add_to) {
  const int64_t n = scores.numel();
  // Doubles stored in an i64 tensor (as the step state): every slot is written before it is read.
  Tensor workspace = Tensor::Empty({3 + n}, DType::kI64, Device::kCuda, MemoryCategory::kWorkspace);
  double* slots = static_cast<double*>(workspace.raw_data());
  CosentStatsKernel<<<1, kCosentThreads, 0, CudaContext::Current().compute_stream()>>>(
      scores.data<float>(), labels.data<float>(), n, slots + 3, slots, slots + 2, add_to);
  KERNEL_LAUNCH_CHECK() << "(CoSENT loss)";
  return workspace;
}

int RowGrid(const Tensor& logits) {
  XLMR_CHECK(logits.dim(0) <= INT_MAX) << "loss: " << logits.dim(0) << " rows";
  return static_cast<int>(logits.dim(0));
}

// fn(T{}) for T the element type of t: __half (f16), __nv_bfloat16 (bf16) or float.
template <typename Fn>
decltype(auto) WithElementType(const Tensor& t, Fn&& fn) {
  if (t.dtype() == DType::kF16) return fn(__half{});
  if (t.dtype() == DType::kBF16) return fn(__nv_bfloat16{});
  return fn(float{});
}

// Each row's loss (0 for ignored rows), queued.
template <typename T>
Tensor CrossEntropyRowLosses(const Tensor& logits, const Tensor& labels, float label_smoothing) {
  const int64_t rows = logits.dim(0);
  // Every row's block stores its loss, 0 for an ignored row.
  Tensor row_loss =
      Tensor::Empty({rows}, DType::kF32, Device::kCuda, MemoryCategory::kWorkspace);
  CrossEntropyRowKernel<T><<<RowGrid(logits), kRowThreads, 0,
                             CudaContext::Current().compute_stream()>>>(
      static_cast<const T*>(logits.raw_data()), labels.data<int32_t>(), logits.dim(1),
      label_smoothing, row_loss.data<float>());
  KERNEL_LAUNCH_CHECK();
  return row_loss;
}

template <typename T>
void CrossEntropyBackwardAs(const Tensor& logits, const Tensor& labels, GradientScaleSource scale,
                            float label_smoothing, Tensor* d) {
  CrossEntropyBackwardKernel<T><<<RowGrid(logits), kRowThreads, 0,
                                  CudaContext::Current().compute_stream()>>>(
      static_cast<const T*>(logits.raw_data()), labels.data<int32_t>(), logits.dim(1),
      label_smoothing, scale, d->data<float>());
  KERNEL_LAUNCH_CHECK();
}

}  // namespace

LossTotals CrossEntropyLossSum(const Tensor& logits, const Tensor& labels, float label_smoothing) {
  if (logits.dim(0) == 0) return {};
  const Tensor row_loss = WithElementType(logits, [&](auto tag) {
    return CrossEntropyRowLosses<decltype(tag)>(logits, labels, label_smoothing);
  });
  return SumTerms(CrossEntropyTerm{row_loss.data<float>(), labels.data<int32_t>()}, logits.dim(0));
}

void AddCrossEntropyLossSum(const Tensor& logits, const Tensor& labels, float label_smoothing,
                            double* add_to) {
  if (logits.dim(0) == 0) return;
  const Tensor row_loss = WithElementType(logits, [&](auto tag) {
    return CrossEntropyRowLosses<decltype(tag)>(logits, labels, label_smoothing);
  });
  int64_t blocks = 0;
  QueueSum(CrossEntropyTerm{row_loss.data<float>(), labels.data<int32_t>()}, logits.dim(0), add_to, &blocks);
}

Tensor CrossEntropyBackward(const Tensor& logits, const Tensor& labels, GradientScaleSource scale,
                            float label_smoothing) {
  // Zeros: the kernel leaves ignored rows untouched, and their gradient is 0.
  Tensor d =
      Tensor::Zeros(logits.shape(), DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  if (logits.dim(0) == 0) return d;
  WithElementType(logits, [&](auto tag) {
    CrossEntropyBackwardAs<decltype(tag)>(logits, labels, scale, label_smoothing, &d);
  });
  return d;
}

LossTotals MseLossSum(const Tensor& predictions, const Tensor& targets) {
  const float* t = targets.data<float>();
  const int64_t n = predictions.numel();
  return WithElementType(predictions, [&](auto tag) {
    using T = decltype(tag);
    return SumTerms(MseTerm<T>{static_cast<const T*>(predictions.raw_data()), t}, n);
  });
}

void AddMseLossSum(const Tensor& predictions, const Tensor& targets, double* add_to) {
  const float* t = targets.data<float>();
  const int64_t n = predictions.numel();
  if (n == 0) return;
  WithElementType(predictions, [&](auto tag) {
    using T = decltype(tag);
    int64_t blocks = 0;
    QueueSum(MseTerm<T>{static_cast<const T*>(predictions.raw_data()), t}, n, add_to, &blocks);
  });
}

Tensor MseBackward(const Tensor& predictions, const Tensor& targets, GradientScaleSource scale) {
  const MseGrad grad{scale};
  return WithElementType(predictions, [&](auto tag) {
    return LaunchElementGrad<decltype(tag)>(predictions, targets, grad);
  });
}

LossTotals BceWithLogitsLossSum(const Tensor& logits, const Tensor& targets) {
  const float* t = targets.data<float>();
  const int64_t n = logits.numel();
  return WithElementType(logits, [&](auto tag) {
    using T = decltype(tag);
    return SumTerms(BceTerm<T>{static_cast<const T*>(logits.raw_data()), t}, n);
  });
}

void AddBceWithLogitsLossSum(const Tensor& logits, const Tensor& targets, double* add_to) {
  const float* t = targets.data<float>();
  const int64_t n = logits.numel();
  if (n == 0) return;
  WithElementType(logits, [&](auto tag) {
    using T = decltype(tag);
    int64_t blocks = 0;
    QueueSum(BceTerm<T>{static_cast<const T*>(logits.raw_data()), t}, n, add_to, &blocks);
  });
}

Tensor BceWithLogitsBackward(const Tensor& logits, const Tensor& targets, GradientScaleSource scale) {
  const BceGrad grad{scale};
  return WithElementType(logits, [&](auto tag) { return LaunchElementGrad<decltype(tag)>(logits, targets, grad); });
}

LossTotals CosentLossSum(const Tensor& scores, const Tensor& labels) {
  if (scores.numel() == 0) return {};
  cudaStream_t stream = CudaContext::Current().compute_stream();
  const Tensor workspace = QueueCosentStats(scores, labels, /*add_to=*/nullptr);
  double loss = 0.0;
  CUDA_CHECK(cudaMemcpyAsync(&loss, static_cast<const double*>(workspace.raw_data()) + 2, sizeof(double),
                             cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream)) << "(CoSENT loss)";
  return {loss, 1};
}

void AddCosentLossSum(const Tensor& scores, const Tensor& labels, double* add_to) {
  if (scores.numel() == 0) return;
  QueueCosentStats(scores, labels, add_to);
}

Tensor CosentBackward(const Tensor& scores, const Tensor& labels, GradientScaleSource scale) {
  const int64_t n = scores.numel();
  Tensor d = Tensor::Empty({n}, DType::kF32, Device::kCuda, MemoryCategory::kActivations);
  if (n == 0) return d;
  const Tensor workspace = QueueCosentStats(scores, labels, /*add_to=*/nullptr);
  const int64_t blocks = (n + kCosentThreads - 1) / kCosentThreads;
  XLMR_CHECK(blocks <= INT_MAX) << "CoSENT: " << n << " scores";
  CosentBackwardKernel<<<static_cast<int>(blocks), kCosentThreads, 0, CudaContext::Current().compute_stream()>>>(
      scores.data<float>(), labels.data<float>(), n, static_cast<const double*>(workspace.raw_data()), scale,
      d.data<float>());
  KERNEL_LAUNCH_CHECK() << "(CoSENT backward)";
  return d;
}

}  // namespace xlmr::kernels::cuda
