#include "models/xlmr/autocast.h"

#include "framework/ops/elementwise.h"

namespace xlmr::models {

Tensor LinearWeight(const ParameterStore& store, int index, const PassContext& context) {
  return context.fp16 ? store.half_param(index) : store.param(index);
}

Tensor LinearBias(const ParameterStore& store, int index, const PassContext& context) {
  if (!context.fp16) return store.param(index);
  const Tensor half = store.half_param(index);
  // Workspace, not activations: it lives for one Linear call and is no part of what a block saves.
  Tensor widened = Tensor::Zeros(half.shape(), DType::kF32, half.device(), MemoryCategory::kWorkspace);
  ops::CastInto(half, &widened);
  return widened;
}

}  // namespace xlmr::models
