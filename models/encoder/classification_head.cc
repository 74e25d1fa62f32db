#include "models/encoder/classification_head.h"

#include "framework/ops/activations.h"
#include "framework/ops/dropout.h"
#include "framework/ops/linear.h"
#include "framework/ops/select_token.h"
#include "models/encoder/autocast.h"
#include "models/families.h"

namespace xlmr::models {

// The pooled [B,H] dropouts index (example, feature): no padded length in them, so they are
// plain ops::Dropout; `tokens` says where each sequence's first token is (token 0 of each
// padded row, or row cu_seqlens[b] of a packed batch).

namespace {

// BERT's pooler reads the first token as it is; RoBERTa's head drops it out first.
float InputDropoutProbability(const EncoderConfig& config, const PassContext& context) {
  return config.family->pooler ? 0.0f : HeadDropoutProbability(config, context);
}

}  // namespace

Tensor ClassificationHead::Forward(const Tensor& sequence, const TokenLayout& tokens,
                                   const ParameterStore& store, const PassContext& context) {
  const DType mm = context.matmul_dtype();
  const float p = HeadDropoutProbability(config_, context);
  auto weight = [&](int i) { return LinearWeight(store, i, context); };
  auto bias = [&](int i) { return LinearBias(store, i, context); };
  Saved& s = saved_;
  s.sequence_shape = sequence.shape();
  const Tensor first = tokens.packed() ? ops::SelectRows(sequence, tokens.first_rows)
                                       : ops::SelectFirstToken(sequence);
  const Tensor pooled = ops::Dropout(first, InputDropoutProbability(config_, context),
                                     context.KeyFor(layer_, kHeadInputDropout));
  s.pooled_mm = InDType(pooled, mm);
  const Tensor dense = ops::Linear(s.pooled_mm, weight(params_.dense_weight),
                                   bias(params_.dense_bias), mm);
  s.hidden = ops::Tanh(dense);
  s.hidden_dropped = ops::Dropout(s.hidden, p, context.KeyFor(layer_, kHeadHiddenDropout));
  return ops::Linear(s.hidden_dropped, weight(params_.out_proj_weight),
                     bias(params_.out_proj_bias), mm);
}

Tensor ClassificationHead::Backward(const Tensor& d_logits, const TokenLayout& tokens,
                                    ParameterStore& store, const PassContext& context) {
  const DType mm = context.matmul_dtype();
  const float p = HeadDropoutProbability(config_, context);
  const Saved s = std::move(saved_);
  Clear();
  auto linear_backward = [&](const Tensor& dy, const Tensor& x, int w, int b) {
    Tensor dw = store.grad(w);
    Tensor db = store.grad(b);
    return ops::LinearBackward(dy, x, LinearWeight(store, w, context), &dw, &db, mm);
  };
  const Tensor d_hidden_dropped = linear_backward(InDType(d_logits, mm), s.hidden_dropped,
                                                  params_.out_proj_weight, params_.out_proj_bias);
  const Tensor d_hidden =
      ops::DropoutBackward(d_hidden_dropped, p, context.KeyFor(layer_, kHeadHiddenDropout));
  const Tensor d_dense = ops::TanhBackward(d_hidden, s.hidden);
  const Tensor d_pooled_mm =
      linear_backward(d_dense, s.pooled_mm, params_.dense_weight, params_.dense_bias);
  const Tensor d_pooled = ops::DropoutBackward(InDType(d_pooled_mm, DType::kF32),
                                               InputDropoutProbability(config_, context),
                                               context.KeyFor(layer_, kHeadInputDropout));
  if (tokens.packed()) return ops::SelectRowsBackward(d_pooled, tokens.first_rows, s.sequence_shape[0]);
  return ops::SelectFirstTokenBackward(d_pooled, s.sequence_shape);
}

}  // namespace xlmr::models
