#include "models/encoder/autocast.h"

#include "framework/ops/elementwise.h"

namespace xlmr::models {

Tensor LinearWeight(const ParameterStore& store, int index, const PassContext& context) {
  return context.autocast != DType::kF32 ? store.half_param(index) : store.param(index);
}

Tensor LinearBias(const ParameterStore& store, int index, const PassContext& context) {
  return context.autocast != DType::kF32 ? store.half_param(index) : store.param(index);
}

Tensor InDType(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : ops::Cast(t, dtype); }

}  // namespace xlmr::models
