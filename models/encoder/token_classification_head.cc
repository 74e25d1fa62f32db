#include "models/encoder/token_classification_head.h"

#include "framework/ops/dropout.h"
#include "framework/ops/linear.h"
#include "models/encoder/autocast.h"

namespace xlmr::models {

Tensor TokenClassificationHead::Forward(const Tensor& sequence, const TokenLayout& tokens,
                                        const ParameterStore& store, const PassContext& context) {
  const DType mm = context.matmul_dtype();
  const Tensor dropped = TokenDropout(sequence, HeadDropoutProbability(config_, context),
                                      context.KeyFor(layer_, kHeadInputDropout), tokens);
  dropped_mm_ = InDType(dropped, mm);
  return ops::Linear(dropped_mm_, LinearWeight(store, params_.weight, context),
                     LinearBias(store, params_.bias, context), mm);
}

Tensor TokenClassificationHead::Backward(const Tensor& d_logits, const TokenLayout& tokens,
                                         ParameterStore& store, const PassContext& context) {
  const DType mm = context.matmul_dtype();
  Tensor dw = store.grad(params_.weight);
  Tensor db = store.grad(params_.bias);
  const Tensor d_dropped_mm = ops::LinearBackward(
      InDType(d_logits, mm), dropped_mm_, LinearWeight(store, params_.weight, context), &dw, &db, mm);
  Clear();
  return TokenDropoutBackward(InDType(d_dropped_mm, DType::kF32),
                              HeadDropoutProbability(config_, context),
                              context.KeyFor(layer_, kHeadInputDropout), tokens);
}

}  // namespace xlmr::models
