#include "kernels/cpu/dropout.h"

#include "kernels/cpu/dropout_uniforms.h"
#include "kernels/cpu/float_access.h"

namespace xlmr::kernels::cpu {

Tensor DropoutApply(const Tensor& x, float p, const DropoutKey& key) {
  Tensor y = Tensor::Empty(x.shape(), x.dtype(), x.device(), MemoryCategory::kActivations);
  const float scale = DropoutScale(p);
  ParallelForEachChunk(x.numel(), [&](int64_t begin, int64_t count) {
    float values[kFloatChunk], uniforms[kFloatChunk];
    LoadFloats(x, begin, count, values);
    DropoutUniformsVectorized(key, begin, count, uniforms);
    for (int64_t i = 0; i < count; ++i) values[i] = uniforms[i] >= p ? values[i] * scale : 0.0f;
    StoreFloats(values, begin, count, &y);
  });
  return y;
}

}  // namespace xlmr::kernels::cpu
