#include "kernels/cuda/activations.h"

#include "framework/core/check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/float_access.cuh"

namespace xlmr::kernels::cuda {
namespace {

// The constants of kernels/cpu/activations.cc.
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;

// The pointwise functions, written with __fmul_rn/__fadd_rn so that nvcc cannot contract them
// into fused multiply-adds: each step rounds exactly as the CPU's separate operations do.
struct Gelu {
  __device__ float operator()(float v) const {
    const float erf_term = __fadd_rn(1.0f, erff(__fmul_rn(v, kInvSqrt2)));
    return __fmul_rn(__fmul_rn(0.5f, v), erf_term);
  }
};
struct GeluGrad {
  __device__ float operator()(float grad, float v) const {
    const float cdf = __fmul_rn(0.5f, __fadd_rn(1.0f, erff(__fmul_rn(v, kInvSqrt2))));
    const float pdf = __fmul_rn(kInvSqrt2Pi, expf(__fmul_rn(__fmul_rn(-0.5f, v), v)));
    return __fmul_rn(grad, __fadd_rn(cdf, __fmul_rn(v, pdf)));
  }
};
struct Tanh {
  __device__ float operator()(float v) const { return tanhf(v); }
};
struct TanhGrad {
  __device__ float operator()(float grad, float t) const {
    return __fmul_rn(grad, __fsub_rn(1.0f, __fmul_rn(t, t)));
  }
};

template <typename Fn>
__global__ void MapKernel(FloatsIn x, FloatsOut out, int64_t count, Fn fn) {
  for (int64_t i = GridStrideBegin(); i < count; i += GridStride()) out.Store(i, fn(x[i]));
}

template <typename Fn>
__global__ void MapKernel2(FloatsIn a, FloatsIn b, FloatsOut out, int64_t count, Fn fn) {
  for (int64_t i = GridStrideBegin(); i < count; i += GridStride()) {
    out.Store(i, fn(a[i], b[i]));
  }
}

// fn(x) elementwise into a new tensor of x's shape and dtype.
template <typename Fn>
Tensor Map(const char* op, const Tensor& x, Fn fn) {
  Tensor out = Tensor::Empty(x.shape(), x.dtype(), Device::kCuda, MemoryCategory::kActivations);
  const int64_t count = x.numel();
  if (count == 0) return out;
  MapKernel<<<GridStrideBlocks(count), kThreadsPerBlock, 0, ComputeStream()>>>(
      ReadFloats(x, op), WriteFloats(out, op), count, fn);
  KERNEL_LAUNCH_CHECK() << op;
  return out;
}

// fn(dy, saved) elementwise into a new tensor of saved's shape and dtype.
template <typename Fn>
Tensor Map2(const char* op, const Tensor& dy, const Tensor& saved, Fn fn) {
  XLMR_CHECK(dy.shape() == saved.shape())
      << op << ": " << ShapeString(dy.shape()) << " vs " << ShapeString(saved.shape());
  Tensor out =
      Tensor::Empty(saved.shape(), saved.dtype(), Device::kCuda, MemoryCategory::kActivations);
  const int64_t count = saved.numel();
  if (count == 0) return out;
  MapKernel2<<<GridStrideBlocks(count), kThreadsPerBlock, 0, ComputeStream()>>>(
      ReadFloats(dy, op), ReadFloats(saved, op), WriteFloats(out, op), count, fn);
  KERNEL_LAUNCH_CHECK() << op;
  return out;
}

}  // namespace

Tensor GeluForward(const Tensor& x) { return Map("cuda::GeluForward", x, Gelu{}); }

Tensor GeluBackward(const Tensor& dy, const Tensor& x) {
  return Map2("cuda::GeluBackward", dy, x, GeluGrad{});
}

Tensor TanhForward(const Tensor& x) { return Map("cuda::TanhForward", x, Tanh{}); }

Tensor TanhBackward(const Tensor& dy, const Tensor& y) {
  return Map2("cuda::TanhBackward", dy, y, TanhGrad{});
}

}  // namespace xlmr::kernels::cuda
