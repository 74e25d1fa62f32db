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

// Four elements per thread and step (Load4/Store4: one 8- or 16-byte access each); `quads` =
// count / 4. The same values as MapKernel, element for element.
template <typename Fn>
__global__ void MapKernel4(FloatsIn x, FloatsOut out, int64_t quads, Fn fn) {
  for (int64_t q = GridStrideBegin(); q < quads; q += GridStride()) {
    const float4 v = x.Load4(q);
    out.Store4(q, {fn(v.x), fn(v.y), fn(v.z), fn(v.w)});
  }
}

template <typename Fn>
__global__ void MapKernel2(FloatsIn a, FloatsIn b, FloatsOut out, int64_t count, Fn fn) {
  for (int64_t i = GridStrideBegin(); i < count; i += GridStride()) {
    out.Store(i, fn(a[i], b[i]));
  }
}

template <typename Fn>
__global__ void MapKernel2x4(FloatsIn a, FloatsIn b, FloatsOut out, int64_t quads, Fn fn) {
  for (int64_t q = GridStrideBegin(); q < quads; q += GridStride()) {
    const float4 u = a.Load4(q), v = b.Load4(q);
    out.Store4(q, {fn(u.x, v.x), fn(u.y, v.y), fn(u.z, v.z), fn(u.w, v.w)});
  }
}

// fn(x) elementwise into a new tensor of x's shape and dtype.
template <typename Fn>
Tensor Map(const char* op, const Tensor& x, Fn fn) {
  Tensor out = Tensor::Empty(x.shape(), x.dtype(), Device::kCuda, MemoryCategory::kActivations);
  const int64_t count = x.numel();
  if (count == 0) return out;
  if (FourWide(x) && FourWide(out)) {
    MapKernel4<<<GridStrideBlocks(count / 4), kThreadsPerBlock, 0, ComputeStream()>>>(
        ReadFloats(x, op), WriteFloats(out, op), count / 4, fn);
  } else {
    MapKernel<<<GridStrideBlocks(count), kThreadsPerBlock, 0, ComputeStream()>>>(
        ReadFloats(x, op), WriteFloats(out, op), count, fn);
  }
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
  if (FourWide(dy) && FourWide(saved) && FourWide(out)) {
    MapKernel2x4<<<GridStrideBlocks(count / 4), kThreadsPerBlock, 0, ComputeStream()>>>(
        ReadFloats(dy, op), ReadFloats(saved, op), WriteFloats(out, op), count / 4, fn);
  } else {
    MapKernel2<<<GridStrideBlocks(count), kThreadsPerBlock, 0, ComputeStream()>>>(
        ReadFloats(dy, op), ReadFloats(saved, op), WriteFloats(out, op), count, fn);
  }
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
