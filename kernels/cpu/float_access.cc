#include "kernels/cpu/float_access.h"

#include <cstring>

#include "framework/core/check.h"
#include "framework/tensor/half.h"

namespace xlmr::kernels::cpu {
namespace {

void CheckRange(const Tensor& t, int64_t begin, int64_t count) {
  XLMR_CHECK(t.device() == Device::kCpu)
      << "CPU kernel given a " << DeviceName(t.device()) << " tensor";
  XLMR_CHECK(begin >= 0 && count >= 0 && begin + count <= t.numel())
      << "elements [" << begin << ", " << begin + count << ") outside a tensor of " << t.numel();
}

}  // namespace

void LoadFloats(const Tensor& src, int64_t begin, int64_t count, float* out) {
  CheckRange(src, begin, count);
  switch (src.dtype()) {
    case DType::kF32:
      std::memcpy(out, src.data<float>() + begin, static_cast<size_t>(count) * sizeof(float));
      return;
    case DType::kF16: {
      const Half* in = src.data<Half>() + begin;
      for (int64_t i = 0; i < count; ++i) out[i] = HalfToFloat(in[i]);
      return;
    }
    case DType::kBF16: {
      const BFloat16* in = src.data<BFloat16>() + begin;
      for (int64_t i = 0; i < count; ++i) out[i] = BFloat16ToFloat(in[i]);
      return;
    }
    default:
      XLMR_CHECK(false) << "LoadFloats of a " << DTypeName(src.dtype()) << " tensor";
  }
}

void StoreFloats(const float* values, int64_t begin, int64_t count, Tensor* dst) {
  CheckRange(*dst, begin, count);
  switch (dst->dtype()) {
    case DType::kF32:
      std::memcpy(dst->data<float>() + begin, values, static_cast<size_t>(count) * sizeof(float));
      return;
    case DType::kF16: {
      Half* out = dst->data<Half>() + begin;
      for (int64_t i = 0; i < count; ++i) out[i] = FloatToHalf(values[i]);
      return;
    }
    case DType::kBF16: {
      BFloat16* out = dst->data<BFloat16>() + begin;
      for (int64_t i = 0; i < count; ++i) out[i] = FloatToBFloat16(values[i]);
      return;
    }
    default:
      XLMR_CHECK(false) << "StoreFloats into a " << DTypeName(dst->dtype()) << " tensor";
  }
}

Tensor AsF32(const Tensor& t) {
  if (t.dtype() == DType::kF32) return t;
  Tensor out = Tensor::Empty(t.shape(), DType::kF32, t.device(), MemoryCategory::kWorkspace);
  float* values = out.data<float>();
  ParallelForEachChunk(t.numel(), [&](int64_t begin, int64_t count) {
    LoadFloats(t, begin, count, values + begin);
  });
  return out;
}

Tensor RoundToDType(const Tensor& t_f32, DType dtype) {
  if (dtype == DType::kF32) return t_f32;
  Tensor out = Tensor::Empty(t_f32.shape(), dtype, t_f32.device(), MemoryCategory::kActivations);
  const float* values = t_f32.data<float>();
  ParallelForEachChunk(t_f32.numel(), [&](int64_t begin, int64_t count) {
    StoreFloats(values + begin, begin, count, &out);
  });
  return out;
}

}  // namespace xlmr::kernels::cpu
