#include "models/xlmr/autocast.h"

namespace xlmr::models {

Tensor LinearWeight(const ParameterStore& store, int index, const PassContext& context) {
  return context.autocast != DType::kF32 ? store.half_param(index) : store.param(index);
}

Tensor LinearBias(const ParameterStore& store, int index, const PassContext& context) {
  return context.autocast != DType::kF32 ? store.half_param(index) : store.param(index);
}

}  // namespace xlmr::models
