#include "kernels/cpu/activations.h"

#include <cmath>

#include "kernels/cpu/float_access.h"
#include "kernels/cpu/gelu_math.h"

namespace xlmr::kernels::cpu {

// GELU goes through the array functions of gelu_math.h (vectorised erf), on whole ranges of
// f32 tensors or on chunks converted to f32; the output is written whole, so it starts
// uninitialised.
Tensor GeluForward(const Tensor& x) {
  Tensor y = Tensor::Empty(x.shape(), x.dtype(), x.device(), MemoryCategory::kActivations);
  if (x.dtype() == DType::kF32) {
    const float* in = x.data<float>();
    float* out = y.data<float>();
    ParallelFor(x.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      GeluForwardF32(in + begin, end - begin, out + begin);
    });
    return y;
  }
  ParallelForEachChunk(x.numel(), [&](int64_t begin, int64_t count) {
    float values[kFloatChunk];
    LoadFloats(x, begin, count, values);
    GeluForwardF32(values, count, values);
    StoreFloats(values, begin, count, &y);
  });
  return y;
}

Tensor GeluBackward(const Tensor& dy, const Tensor& x) {
  Tensor dx = Tensor::Empty(x.shape(), x.dtype(), x.device(), MemoryCategory::kActivations);
  if (dy.dtype() == DType::kF32 && x.dtype() == DType::kF32) {
    const float* grad = dy.data<float>();
    const float* in = x.data<float>();
    float* out = dx.data<float>();
    ParallelFor(x.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
      GeluBackwardF32(grad + begin, in + begin, end - begin, out + begin);
    });
    return dx;
  }
  ParallelForEachChunk(x.numel(), [&](int64_t begin, int64_t count) {
    float grad[kFloatChunk], values[kFloatChunk];
    LoadFloats(dy, begin, count, grad);
    LoadFloats(x, begin, count, values);
    GeluBackwardF32(grad, values, count, values);
    StoreFloats(values, begin, count, &dx);
  });
  return dx;
}

Tensor TanhForward(const Tensor& x) {
  return MapElements(x, x.dtype(), [](float v) { return std::tanh(v); });
}

Tensor TanhBackward(const Tensor& dy, const Tensor& y) {
  return MapElements(dy, y, y.dtype(), [](float grad, float t) { return grad * (1.0f - t * t); });
}

}  // namespace xlmr::kernels::cpu
