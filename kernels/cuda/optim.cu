#include "kernels/cuda/optim.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "framework/core/check.h"
#include "framework/tensor/parameter_store.h"
#include "kernels/cuda/cast.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"

// Rounding: nvcc contracts a * b + c into one fma by default, which the CPU code (built with
// -ffp-contract=off) never does. Every product, quotient, square root and sum below is written
// with an explicit round-to-nearest intrinsic (__fmul_rn, __fdiv_rn, ...), which nvcc never
// contracts, and the fused multiply-adds the CPU writes as std::fma are __fmaf_rn. Denormals
// are kept (nvcc's default -ftz=false), as on the CPU.

namespace xlmr::kernels::cuda {
namespace {

constexpr int kThreadsPerBlock = 256;
// Enough resident blocks to fill every SM (2048 threads each on sm_80/sm_90); grid-stride loops
// cover the rest.
constexpr int kBlocksPerMultiprocessor = 8;
// The reduction's first-stage grid: fixed by n alone (never by the GPU), so its result is the
// same on every device.
constexpr int kMaxReductionBlocks = 1024;

int GridFor(int64_t count) {
  const int64_t blocks_needed = (count + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const int64_t blocks_resident =
      static_cast<int64_t>(CudaContext::Current().multiprocessor_count()) *
      kBlocksPerMultiprocessor;
  return static_cast<int>(std::min(blocks_needed, blocks_resident));
}

// The sum-of-squares reduction's first-stage grid for `count` values: fixed by the count alone.
int ReductionBlocks(int64_t count) {
  return static_cast<int>(std::min<int64_t>((count + kThreadsPerBlock - 1) / kThreadsPerBlock, kMaxReductionBlocks));
}

cudaStream_t ComputeStream() { return CudaContext::Current().compute_stream(); }

void CheckDeviceF32(const char* function, const char* name, const Tensor& tensor) {
  XLMR_CHECK(tensor.defined()) << function << ": " << name << " is an empty handle";
  XLMR_CHECK(tensor.device() == Device::kCuda && tensor.dtype() == DType::kF32)
      << function << ": " << name << " must be f32 on cuda; got " << DTypeName(tensor.dtype())
      << " on " << DeviceName(tensor.device());
}

// ---- Device scratch for the values read back on the host ----

// Partial sums of the reduction, its result and the finite flag. Only ever used on the compute
// stream, where the passes run one after another.
struct Scratch {
  double partial_sums[kMaxReductionBlocks];
  double sum;
  int32_t non_finite;
  AdamWStepScalars chosen;  // AdamWStepWithState's candidate, picked on the device
};

// Allocated on first use and never freed, like the context: no CUDA call may run during static
// destruction.
Scratch* DeviceScratch() {
  static const std::shared_ptr<Storage>* const storage = new std::shared_ptr<Storage>(
      Storage::Allocate(Device::kCuda, sizeof(Scratch), MemoryCategory::kWorkspace));
  return static_cast<Scratch*>((*storage)->data());
}

template <typename T>
T ReadBack(const T* device_value) {
  T host_value;
  CUDA_CHECK(cudaMemcpyAsync(&host_value, device_value, sizeof(T), cudaMemcpyDeviceToHost,
                             ComputeStream()));
  CUDA_CHECK(cudaStreamSynchronize(ComputeStream()));
  return host_value;
}

// ---- AdamW ----

// A group of decay runs as one kernel argument. The kernel indexes `ends` with a run-time index,
// which is why it is passed as __grid_constant__: read in place from the parameter space rather
// than copied to every thread's local memory.
struct RunGroup {
  int64_t begin;                    // first element of the first run
  int64_t ends[kRunsPerLaunch];     // run r covers [previous end (or begin), ends[r])
  uint32_t decay_bits[(kRunsPerLaunch + 31) / 32];
  uint32_t half_bits[(kRunsPerLaunch + 31) / 32];  // the run's half working copy is written
  // Set for a gap between two caller runs (the parameter store's alignment padding): its
  // elements are skipped, so one launch covers runs separated by small gaps.
  uint32_t skip_bits[(kRunsPerLaunch + 31) / 32];
  int count;                        // >= 1
};
static_assert(sizeof(RunGroup) <= 4000, "kernel parameters are limited to 4 KiB");

// ATen's scalar-weight lerp, as kernels/cpu/optim.cc's AdamWUpdateRange evaluates it.
__device__ __forceinline__ float TorchLerp(float self, float end, float weight) {
  const float diff = __fsub_rn(end, self);
  return fabsf(weight) < 0.5f ? __fmaf_rn(weight, diff, self)
                              : __fmaf_rn(__fsub_rn(weight, 1.0f), diff, end);
}

__device__ __forceinline__ void StoreRounded(__half* out, float value) { *out = __float2half_rn(value); }
__device__ __forceinline__ void StoreRounded(__nv_bfloat16* out, float value) {
  *out = __float2bfloat16_rn(value);
}

// With the step state, the gradients are raw (loss-scaled, unclipped): the kernel unscales and
// clips each as it reads it and then clears it (framework/ops/step_decisions.h's pass 2).
struct RawGradients {
  bool active = false;   // the step-state pass
  bool unscale = false;  // multiply by InverseScaleOf(row)
  double max_grad_norm = 0.0;
};

// H: __half or __nv_bfloat16 also writes the working copy half_param in that dtype; float
// writes none (half_param is null).
template <typename H>
__global__ void __launch_bounds__(kThreadsPerBlock)
    AdamWKernel(const AdamWStepScalars by_value, const __grid_constant__ RunGroup group,
                float* __restrict__ param, float* __restrict__ grad,
                float* __restrict__ exp_avg, float* __restrict__ exp_avg_sq,
                H* __restrict__ half_param, int64_t half_first, const AdamWStepScalars* __restrict__ chosen,
                const double* __restrict__ row, const RawGradients raw) {
  // With the step state: no update when the step skips or no candidate matched (the row says);
  // raw gradients are still cleared.
  const bool no_update = row != nullptr && (StepSkips(row) || row[kSlotCandidateError] != 0.0);
  if (no_update && !raw.active) return;
  const float inverse_scale = raw.active && raw.unscale ? InverseScaleOf(row) : 1.0f;
  const float clip = raw.active ? ClipCoefficientOf(row, raw.max_grad_norm) : 1.0f;
  const AdamWStepScalars s = chosen != nullptr && !no_update ? *chosen : by_value;
  const int64_t end = group.ends[group.count - 1];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  // i only grows, so each thread's run cursor only moves forward: over the whole launch a
  // thread advances it at most group.count times.
  int run = 0;
  for (int64_t i = group.begin + static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < end; i += stride) {
    while (group.ends[run] <= i) ++run;  // i < end = ends[count - 1] keeps run < count
    if ((group.skip_bits[run >> 5] >> (run & 31)) & 1u) continue;
    const bool decay = (group.decay_bits[run >> 5] >> (run & 31)) & 1u;
    float g = grad[i];
    if (raw.active) {
      grad[i] = 0.0f;
      if (no_update) continue;
      // The in-place passes' two roundings: unscale, then clip (a multiply by 1 changes nothing).
      g = __fmul_rn(__fmul_rn(g, inverse_scale), clip);
    }
    const float m = TorchLerp(exp_avg[i], g, s.lerp_weight);
    const float v = __fmaf_rn(__fmul_rn(s.one_minus_beta2, g), g, __fmul_rn(exp_avg_sq[i], s.beta2));
    const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(v), s.bias_correction2_sqrt), s.eps);
    // Undecayed elements multiply by exactly 1.0f (a no-op), as the CPU loop does.
    const float decayed = __fmul_rn(param[i], decay ? s.decay_factor : 1.0f);
    const float updated = __fadd_rn(decayed, __fdiv_rn(__fmul_rn(s.neg_step_size, m), denom));
    param[i] = updated;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    if constexpr (!std::is_same_v<H, float>) {
      if ((group.half_bits[run >> 5] >> (run & 31)) & 1u) StoreRounded(half_param + (i - half_first), updated);
    }
  }
}

// Gaps up to this many elements (the parameter store pads each range to 64) become skipped
// runs inside a group; a longer gap starts a new launch rather than idle threads over it.
constexpr int64_t kLargestSkippedGap = 1024;

// Checks the runs and returns them grouped kRunsPerLaunch at a time, empty runs dropped.
std::vector<RunGroup> GroupRuns(const std::vector<AdamWDecayRun>& runs, int64_t total) {
  std::vector<RunGroup> groups;
  int64_t previous_end = 0;
  for (const AdamWDecayRun& run : runs) {
    XLMR_CHECK(run.offset >= previous_end && run.size >= 0 && run.offset + run.size <= total)
        << "AdamWStep: run [" << run.offset << ", " << run.offset + run.size
        << ") is out of order or outside [0, " << total << ")";
    if (run.size == 0) continue;
    const int64_t gap = groups.empty() ? 0 : run.offset - previous_end;
    // A small gap becomes a skipped run when the group has room for it and this run; any other
    // gap, or a full group, starts a new group, so that groups stay gap-free inside.
    const bool skip_gap = gap > 0 && gap <= kLargestSkippedGap &&
                          groups.back().count + 2 <= kRunsPerLaunch;
    if (groups.empty() || groups.back().count == kRunsPerLaunch || (gap > 0 && !skip_gap)) {
      groups.push_back(RunGroup{});
      groups.back().begin = run.offset;
    } else if (skip_gap) {
      RunGroup& group = groups.back();
      group.ends[group.count] = run.offset;
      group.skip_bits[group.count >> 5] |= 1u << (group.count & 31);
      ++group.count;
    }
    RunGroup& group = groups.back();
    group.ends[group.count] = run.offset + run.size;
    if (run.decay) group.decay_bits[group.count >> 5] |= 1u << (group.count & 31);
    if (run.half_copy) group.half_bits[group.count >> 5] |= 1u << (group.count & 31);
    ++group.count;
    previous_end = run.offset + run.size;
  }
  return groups;
}

// ---- Unscale and finite check ----

__device__ __forceinline__ bool IsFiniteBits(float value) {
  return (__float_as_uint(value) & 0x7f800000u) != 0x7f800000u;
}

// One thread's grid-stride share of the unscale pass: whether its values were all finite before
// the multiply (multiply false: reads only, `values` is never written).
__device__ bool UnscaleThreadShare(float* __restrict__ values, int64_t count, bool multiply, float inv_scale) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  bool all_finite = true;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const float value = values[i];
    all_finite &= IsFiniteBits(value);
    if (multiply) values[i] = __fmul_rn(value, inv_scale);
  }
  return all_finite;
}

// kMultiply false: reads only (AllFinite); `values` is then never written.
template <bool kMultiply>
__global__ void __launch_bounds__(kThreadsPerBlock)
    UnscaleKernel(float* __restrict__ values, int64_t count, float inv_scale,
                  int32_t* __restrict__ non_finite) {
  // Every writer stores the same 1, so the unordered stores need no atomics.
  if (!UnscaleThreadShare(values, count, kMultiply, inv_scale)) *non_finite = 1;
}

template <bool kMultiply>
bool LaunchUnscale(float* values, int64_t count, float inv_scale) {
  if (count == 0) return true;
  Scratch* scratch = DeviceScratch();
  CUDA_CHECK(cudaMemsetAsync(&scratch->non_finite, 0, sizeof(int32_t), ComputeStream()));
  UnscaleKernel<kMultiply><<<GridFor(count), kThreadsPerBlock, 0, ComputeStream()>>>(
      values, count, inv_scale, &scratch->non_finite);
  KERNEL_LAUNCH_CHECK();
  return ReadBack(&scratch->non_finite) == 0;
}

// ---- Sum of squares ----

// The sum of every thread's `value` in the block, in a fixed tree order; the same in every
// thread on return. Call once per kernel (the shared array is not reused).
__device__ double BlockSum(double value) {
  __shared__ double shared[kThreadsPerBlock];
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int width = kThreadsPerBlock / 2; width > 0; width /= 2) {
    if (threadIdx.x < width) shared[threadIdx.x] += shared[threadIdx.x + width];
    __syncthreads();
  }
  return shared[0];
}

// Stage 1: block b writes the sum of squares of its grid-stride share to partial_sums[b].
// The square of a float is exact in double, so contracting `sum + v * v` into a double fma
// changes nothing.
__global__ void __launch_bounds__(kThreadsPerBlock)
    PartialSumsOfSquaresKernel(const float* __restrict__ values, int64_t count,
                               double* __restrict__ partial_sums) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  double sum = 0.0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const double value = values[i];
    sum += value * value;
  }
  const double block_sum = BlockSum(sum);
  if (threadIdx.x == 0) partial_sums[blockIdx.x] = block_sum;
}

// Pass 1 with the step state: PartialSumsOfSquaresKernel of the unscaled values (value *
// InverseScaleOf(row) rounded to float when `unscale`), and row[kSlotFoundInf] = 1 when any
// value was inf/NaN, in one read; the values are not written.
__global__ void __launch_bounds__(kThreadsPerBlock)
    FlagAndPartialSumsKernel(const float* __restrict__ values, int64_t count, double* row, bool unscale,
                             double* __restrict__ partial_sums) {
  const float inverse_scale = unscale ? InverseScaleOf(row) : 1.0f;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  double sum = 0.0;
  bool all_finite = true;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const float raw = values[i];
    all_finite &= IsFiniteBits(raw);
    const double value = __fmul_rn(raw, inverse_scale);
    sum += value * value;
  }
  const double block_sum = BlockSum(sum);
  if (threadIdx.x == 0) partial_sums[blockIdx.x] = block_sum;
  // Every writer stores the same 1, so the unordered stores need no atomics. Written after the
  // block's reads of the row (BlockSum synchronises the block; other blocks read only the scale).
  if (!all_finite) row[kSlotFoundInf] = 1.0;
}

// Stage 2, one block: thread t sums partials t, t + 256, ... in order, then the block tree.
__global__ void __launch_bounds__(kThreadsPerBlock)
    SumPartialsKernel(const double* __restrict__ partial_sums, int count,
                      double* __restrict__ result) {
  double sum = 0.0;
  for (int i = threadIdx.x; i < count; i += kThreadsPerBlock) sum += partial_sums[i];
  const double total = BlockSum(sum);
  if (threadIdx.x == 0) *result = total;
}

// ---- Clipping ----

__global__ void __launch_bounds__(kThreadsPerBlock)
    ScaleKernel(float* __restrict__ values, int64_t count, float factor) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    values[i] = __fmul_rn(values[i], factor);
  }
}

// ---- ParameterStore's device refresh ----

// Registered when the program starts, so that ParameterStore::RefreshHalfCopy (framework/tensor,
// which cannot depend on this backend) works for CUDA stores in every program that links this
// target (the BUILD marks it alwayslink). Registering only stores a pointer; no CUDA call runs
// before main.
[[maybe_unused]] const bool kHalfCopyRefreshRegistered = [] {
  RegisterDeviceHalfCopyRefresh(&RefreshHalfCopy);
  return true;
}();

}  // namespace

namespace {

// AdamWStep's launches; chosen and row null: the scalars by value, never skipped. The kernel
// writes the gradients only when raw.active (AdamWStepWithState, whose caller passes them
// mutable); AdamWStep's are read only.
void LaunchAdamW(const AdamWStepScalars& scalars, const std::vector<AdamWDecayRun>& runs,
                 Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
                 Tensor* half_param, int64_t half_first, const AdamWStepScalars* chosen, const double* row,
                 const RawGradients& raw) {
  constexpr const char* kFn = "AdamWStep";
  CheckDeviceF32(kFn, "param", param);
  CheckDeviceF32(kFn, "grad", grad);
  CheckDeviceF32(kFn, "exp_avg", exp_avg);
  CheckDeviceF32(kFn, "exp_avg_sq", exp_avg_sq);
  const int64_t total = param.numel();
  XLMR_CHECK(grad.numel() == total && exp_avg.numel() == total && exp_avg_sq.numel() == total)
      << kFn << ": param, grad, exp_avg, exp_avg_sq must have the same element count; got "
      << total << ", " << grad.numel() << ", " << exp_avg.numel() << ", " << exp_avg_sq.numel();
  void* half = nullptr;
  if (half_param != nullptr) {
    XLMR_CHECK(half_param->device() == Device::kCuda &&
               (half_param->dtype() == DType::kF16 || half_param->dtype() == DType::kBF16))
        << kFn << ": half_param must be f16 or bf16 on cuda";  // its window: ops::CheckHalfCopyWindow
    half = half_param->raw_data();
  }
  for (const RunGroup& group : GroupRuns(runs, total)) {
    const int blocks = GridFor(group.ends[group.count - 1] - group.begin);
    float* p = param.data<float>();
    float* m = exp_avg.data<float>();
    float* v = exp_avg_sq.data<float>();
    float* g = const_cast<float*>(grad.data<float>());
    if (half != nullptr && half_param->dtype() == DType::kF16) {
      AdamWKernel<__half><<<blocks, kThreadsPerBlock, 0, ComputeStream()>>>(
          scalars, group, p, g, m, v, static_cast<__half*>(half), half_first, chosen, row, raw);
    } else if (half != nullptr) {
      AdamWKernel<__nv_bfloat16><<<blocks, kThreadsPerBlock, 0, ComputeStream()>>>(
          scalars, group, p, g, m, v, static_cast<__nv_bfloat16*>(half), half_first, chosen, row, raw);
    } else {
      AdamWKernel<float><<<blocks, kThreadsPerBlock, 0, ComputeStream()>>>(
          scalars, group, p, g, m, v, nullptr, 0, chosen, row, raw);
    }
    KERNEL_LAUNCH_CHECK();
  }
}

// ---- The step state's scalar decisions, one thread each ----

__global__ void BeginStepStateKernel(const double* previous, double* row, const double* loss_terms) {
  BeginStepRow(previous, row, *loss_terms);
}

__global__ void CopyStepRowKernel(const double* from, double* to) {
  for (int slot = 0; slot < kStepSlots; ++slot) to[slot] = from[slot];
}

__global__ void FinishStepStateKernel(double* row, const LossScaleRule rule) { FinishStepRow(row, rule); }

__global__ void SelectAdamWKernel(const AdamWCandidates* candidates, double* row, AdamWStepScalars* chosen) {
  if (StepSkips(row)) return;  // no update, so no candidate needed (as the CPU decides)
  const int index = AdamWCandidateOf(row, *candidates);
  if (index < 0) {
    row[kSlotCandidateError] = 1.0;
    return;
  }
  *chosen = candidates->scalars[index];
}

}  // namespace

void AdamWStep(const AdamWStepScalars& scalars, const std::vector<AdamWDecayRun>& runs,
               Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
               Tensor* half_param, int64_t half_first) {
  LaunchAdamW(scalars, runs, param, grad, exp_avg, exp_avg_sq, half_param, half_first, nullptr, nullptr,
              RawGradients{});
}

void AdamWStepWithState(const AdamWCandidates* candidates, const std::vector<AdamWDecayRun>& runs,
                        Tensor& param, Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
                        Tensor* half_param, int64_t half_first, double* row, bool unscale,
                        double max_grad_norm) {
  Scratch* scratch = DeviceScratch();
  SelectAdamWKernel<<<1, 1, 0, ComputeStream()>>>(candidates, row, &scratch->chosen);
  KERNEL_LAUNCH_CHECK();
  LaunchAdamW(AdamWStepScalars{}, runs, param, grad, exp_avg, exp_avg_sq, half_param, half_first,
              &scratch->chosen, row, RawGradients{true, unscale, max_grad_norm});
}

void BeginStepState(const double* previous, double* row, const double* loss_terms) {
  BeginStepStateKernel<<<1, 1, 0, ComputeStream()>>>(previous, row, loss_terms);
  KERNEL_LAUNCH_CHECK();
}

void CopyStepRow(const double* from, double* to) {
  CopyStepRowKernel<<<1, 1, 0, ComputeStream()>>>(from, to);
  KERNEL_LAUNCH_CHECK();
}

void FinishStepState(double* row, const LossScaleRule& rule) {
  FinishStepStateKernel<<<1, 1, 0, ComputeStream()>>>(row, rule);
  KERNEL_LAUNCH_CHECK();
}

bool UnscaleAndCheckFinite(Tensor& grads, float inv_scale) {
  CheckDeviceF32("UnscaleAndCheckFinite", "grads", grads);
  return LaunchUnscale<true>(grads.data<float>(), grads.numel(), inv_scale);
}

bool AllFinite(const Tensor& values) {
  CheckDeviceF32("AllFinite", "values", values);
  // The read-only instantiation never stores through the pointer.
  return LaunchUnscale<false>(values.data<float>(), values.numel(), 1.0f);
}

void FlagNonFiniteAndSumSquares(const Tensor& grads, double* row, bool unscale) {
  CheckDeviceF32("FlagNonFiniteAndSumSquares", "grads", grads);
  const int64_t count = grads.numel();
  if (count == 0) return;
  // SumOfSquaresInto's grid and second stage: the same sum.
  const int blocks = ReductionBlocks(count);
  Scratch* scratch = DeviceScratch();
  FlagAndPartialSumsKernel<<<blocks, kThreadsPerBlock, 0, ComputeStream()>>>(
      grads.data<float>(), count, row, unscale, scratch->partial_sums);
  KERNEL_LAUNCH_CHECK();
  SumPartialsKernel<<<1, kThreadsPerBlock, 0, ComputeStream()>>>(scratch->partial_sums, blocks,
                                                                  row + kSlotSumOfSquares);
  KERNEL_LAUNCH_CHECK();
}

void SumOfSquaresInto(const Tensor& values, double* result) {
  CheckDeviceF32("SumOfSquares", "values", values);
  const int64_t count = values.numel();
  if (count == 0) {
    CUDA_CHECK(cudaMemsetAsync(result, 0, sizeof(double), ComputeStream()));
    return;
  }
  const int blocks = ReductionBlocks(count);
  Scratch* scratch = DeviceScratch();
  PartialSumsOfSquaresKernel<<<blocks, kThreadsPerBlock, 0, ComputeStream()>>>(
      values.data<float>(), count, scratch->partial_sums);
  KERNEL_LAUNCH_CHECK();
  SumPartialsKernel<<<1, kThreadsPerBlock, 0, ComputeStream()>>>(scratch->partial_sums, blocks, result);
  KERNEL_LAUNCH_CHECK();
}

double SumOfSquares(const Tensor& values) {
  CheckDeviceF32("SumOfSquares", "values", values);
  if (values.numel() == 0) return 0.0;
  SumOfSquaresInto(values, &DeviceScratch()->sum);
  return ReadBack(&DeviceScratch()->sum);
}

void ScaleInPlace(Tensor& values, float factor) {
  CheckDeviceF32("ScaleInPlace", "values", values);
  const int64_t count = values.numel();
  if (count == 0) return;
  ScaleKernel<<<GridFor(count), kThreadsPerBlock, 0, ComputeStream()>>>(values.data<float>(),
                                                                        count, factor);
  KERNEL_LAUNCH_CHECK();
}

void RefreshHalfCopy(const Tensor& master, Tensor& half) {
  CheckDeviceF32("RefreshHalfCopy", "master", master);
  XLMR_CHECK(half.defined() && (half.dtype() == DType::kF16 || half.dtype() == DType::kBF16) &&
             half.numel() == master.numel())
      << "RefreshHalfCopy: half must be f16 or bf16 with " << master.numel() << " elements";
  CastTensor(master, &half);  // checks the device and shapes, rounds with __float2half_rn / __float2bfloat16_rn
}

}  // namespace xlmr::kernels::cuda
