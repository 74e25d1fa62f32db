#include "kernels/cpu/elementwise.h"

#include "kernels/cpu/float_access.h"

namespace xlmr::kernels::cpu {

Tensor AddForward(const Tensor& a, const Tensor& b, DType out_dtype) {
  return MapElements(a, b, out_dtype, [](float u, float v) { return u + v; });
}

void CastInto(const Tensor& x, Tensor* out) {
  ParallelForEachChunk(x.numel(), [&](int64_t begin, int64_t count) {
    float values[kFloatChunk];
    LoadFloats(x, begin, count, values);
    StoreFloats(values, begin, count, out);
  });
}

}  // namespace xlmr::kernels::cpu
