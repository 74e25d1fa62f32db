#include "kernels/cpu/dropout.h"

#include <algorithm>

#include "framework/core/check.h"
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

Tensor DropoutApplyRows(const Tensor& x, float p, const DropoutKey& key, const Tensor& row_slots,
                        int64_t num_slots) {
  Tensor y = Tensor::Empty(x.shape(), x.dtype(), x.device(), MemoryCategory::kActivations);
  const float scale = DropoutScale(p);
  const bool f32 = x.dtype() == DType::kF32;
  const int64_t rows = row_slots.numel();
  const int64_t width = rows == 0 ? 0 : x.numel() / rows;
  const int32_t* slots = row_slots.data<int32_t>();
  for (int64_t r = 0; r < rows; ++r) {
    XLMR_CHECK(slots[r] >= 0 && slots[r] < num_slots)
        << "DropoutRows: row " << r << " has slot " << slots[r] << ", outside [0, " << num_slots
        << ")";
  }
  // Whole rows per part, so that a row's uniforms are one vectorised range.
  const int64_t grain = std::max<int64_t>(1, kFloatChunk * 16 / std::max<int64_t>(width, 1));
  ParallelFor(rows, grain, [&](int64_t row_begin, int64_t row_end) {
    float scratch[kFloatChunk], uniforms[kFloatChunk];
    for (int64_t r = row_begin; r < row_end; ++r) {
      const int64_t mask_begin = int64_t{slots[r]} * width;
      for (int64_t c = 0; c < width; c += kFloatChunk) {
        const int64_t count = std::min(kFloatChunk, width - c);
        const int64_t begin = r * width + c;
        const float* values = FloatsOf(x, begin, count, scratch);
        DropoutUniformsVectorized(key, mask_begin + c, count, uniforms);
        float* result = f32 ? y.data<float>() + begin : scratch;
        KeepOrZero(values, uniforms, count, p, scale, result);
        if (!f32) StoreFloats(result, begin, count, &y);
      }
    }
  });
  return y;
}

}  // namespace xlmr::kernels::cpu
