#include "kernels/cpu/dropout.h"

#include "kernels/cpu/dropout_uniforms.h"
#include "kernels/cpu/float_access.h"
#include "kernels/cpu/instruction_set.h"

namespace xlmr::kernels::cpu {
namespace {

// out[i] = uniforms[i] >= p ? values[i] * scale : 0 (out may be values). Vectorised (BUILD:
// -fvect-cost-model=dynamic) and built per instruction set; a compare, a product and a select
// round the same in all of them.
XLMR_INSTRUCTION_SET_CLONES
void KeepOrZero(const float* values, const float* uniforms, int64_t count, float p, float scale,
                float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = uniforms[i] >= p ? values[i] * scale : 0.0f;
}

}  // namespace

Tensor DropoutApply(const Tensor& x, float p, const DropoutKey& key) {
  Tensor y = Tensor::Empty(x.shape(), x.dtype(), x.device(), MemoryCategory::kActivations);
  const float scale = DropoutScale(p);
  const bool f32 = x.dtype() == DType::kF32;
  ParallelForEachChunk(x.numel(), [&](int64_t begin, int64_t count) {
    float scratch[kFloatChunk], uniforms[kFloatChunk];
    const float* values = FloatsOf(x, begin, count, scratch);
    DropoutUniformsVectorized(key, begin, count, uniforms);
    // f32 writes straight into y; f16/bf16 go through the float buffer and are rounded once.
    float* result = f32 ? y.data<float>() + begin : scratch;
    KeepOrZero(values, uniforms, count, p, scale, result);
    if (!f32) StoreFloats(result, begin, count, &y);
  });
  return y;
}

}  // namespace xlmr::kernels::cpu
