#include "models/xlmr/encoder_block.h"

#include "framework/ops/activations.h"
#include "framework/ops/attention.h"
#include "framework/ops/dropout.h"
#include "framework/ops/elementwise.h"
#include "framework/ops/layer_norm.h"
#include "framework/ops/linear.h"

namespace xlmr::models {
namespace {

// [B,S,X] -> [B*S,X] and back: Linear works on rows.
Tensor Rows(const Tensor& t) { return t.Reshaped({t.numel() / t.dim(-1), t.dim(-1)}); }

// Autocast's cast of a linear's input: a no-op when the dtype already matches.
Tensor ToDType(const Tensor& t, DType dtype) { return t.dtype() == dtype ? t : ops::Cast(t, dtype); }

}  // namespace

Tensor EncoderBlock::MatmulWeight(const ParameterStore& store, int index,
                                  const ForwardContext& context) const {
  return context.fp16 ? store.half_param(index) : store.param(index);
}

Tensor EncoderBlock::Forward(const Tensor& input, const Tensor& key_mask, const ParameterStore& store,
                             const ForwardContext& context, EncoderBlockSaved* saved) const {
  const DType mm = context.matmul_dtype();
  const Shape shape = input.shape();  // [B,S,H]
  const float hidden_p = context.training ? config_.hidden_dropout_prob : 0.0f;
  const float attention_p = context.training ? config_.attention_probs_dropout_prob : 0.0f;
  auto weight = [&](int index) { return MatmulWeight(store, index, context); };
  auto bias = [&](int index) { return store.param(index); };
  EncoderBlockSaved& s = *saved;

  s.input = input;
  s.input_mm = ToDType(input, mm);
  const Tensor x = Rows(s.input_mm);
  s.query = ops::Linear(x, weight(params_.query_weight), bias(params_.query_bias), mm).Reshaped(shape);
  s.key = ops::Linear(x, weight(params_.key_weight), bias(params_.key_bias), mm).Reshaped(shape);
  s.value = ops::Linear(x, weight(params_.value_weight), bias(params_.value_bias), mm).Reshaped(shape);
  ops::AttentionOutput attention =
      ops::Attention(s.query, s.key, s.value, key_mask, config_.num_attention_heads, attention_p,
                     context.KeyFor(layer_, kAttentionProbsDropout));
  s.context = attention.context;
  s.attention_probs = attention.probs;

  Tensor projected = ops::Linear(Rows(s.context), weight(params_.attention_output_weight),
                                 bias(params_.attention_output_bias), mm);
  projected = ops::Dropout(projected, hidden_p, context.KeyFor(layer_, kAttentionOutputDropout));
  s.attention_sum = ops::Add(projected.Reshaped(shape), input, DType::kF32);
  ops::LayerNormOutput norm1 =
      ops::LayerNorm(s.attention_sum, store.param(params_.attention_norm_weight),
                     store.param(params_.attention_norm_bias), config_.layer_norm_eps, DType::kF32);
  s.attention_output = norm1.y;
  s.attention_mean = norm1.mean;
  s.attention_rstd = norm1.rstd;

  s.attention_output_mm = ToDType(s.attention_output, mm);
  s.intermediate = ops::Linear(Rows(s.attention_output_mm), weight(params_.intermediate_weight),
                               bias(params_.intermediate_bias), mm);
  s.activated = ops::Gelu(s.intermediate);
  Tensor ffn = ops::Linear(s.activated, weight(params_.output_weight), bias(params_.output_bias), mm);
  ffn = ops::Dropout(ffn, hidden_p, context.KeyFor(layer_, kFeedForwardOutputDropout));
  s.output_sum = ops::Add(ffn.Reshaped(shape), s.attention_output, DType::kF32);
  ops::LayerNormOutput norm2 =
      ops::LayerNorm(s.output_sum, store.param(params_.output_norm_weight),
                     store.param(params_.output_norm_bias), config_.layer_norm_eps, DType::kF32);
  s.output_mean = norm2.mean;
  s.output_rstd = norm2.rstd;
  return norm2.y;
}

Tensor EncoderBlock::Backward(const Tensor& d_output, const Tensor& key_mask,
                              const EncoderBlockSaved& s, ParameterStore& store,
                              const ForwardContext& context) const {
  const DType mm = context.matmul_dtype();
  const Shape shape = s.input.shape();
  const float hidden_p = context.training ? config_.hidden_dropout_prob : 0.0f;
  const float attention_p = context.training ? config_.attention_probs_dropout_prob : 0.0f;
  // Backward of a Linear / LayerNorm whose parameters are store entries w and b.
  auto linear_backward = [&](const Tensor& dy, const Tensor& x, int w, int b) {
    Tensor dw = store.grad(w);
    Tensor db = store.grad(b);
    return ops::LinearBackward(dy, x, MatmulWeight(store, w, context), &dw, &db, mm);
  };
  auto norm_backward = [&](const Tensor& dy, const Tensor& x, const Tensor& mean,
                           const Tensor& rstd, int w, int b) {
    Tensor dw = store.grad(w);
    Tensor db = store.grad(b);
    return ops::LayerNormBackward(dy, x, store.param(w), mean, rstd, &dw, &db);
  };

  // Feed-forward sub-block: LayerNorm(dropout(dense(gelu(dense(a)))) + a).
  Tensor d_output_sum = norm_backward(d_output, s.output_sum, s.output_mean, s.output_rstd,
                                      params_.output_norm_weight, params_.output_norm_bias);
  Tensor d_ffn = ops::DropoutBackward(ToDType(Rows(d_output_sum), mm), hidden_p,
                                      context.KeyFor(layer_, kFeedForwardOutputDropout));
  Tensor d_activated =
      linear_backward(d_ffn, s.activated, params_.output_weight, params_.output_bias);
  Tensor d_intermediate = ops::GeluBackward(d_activated, s.intermediate);
  Tensor d_attention_output_mm =
      linear_backward(d_intermediate, Rows(s.attention_output_mm), params_.intermediate_weight,
                      params_.intermediate_bias);
  // The residual branch and the projection branch meet in fp32.
  Tensor d_attention_output =
      ops::Add(d_output_sum, d_attention_output_mm.Reshaped(shape), DType::kF32);

  // Attention sub-block: LayerNorm(dropout(dense(attention(q, k, v))) + x).
  Tensor d_attention_sum =
      norm_backward(d_attention_output, s.attention_sum, s.attention_mean, s.attention_rstd,
                    params_.attention_norm_weight, params_.attention_norm_bias);
  Tensor d_projected = ops::DropoutBackward(ToDType(Rows(d_attention_sum), mm), hidden_p,
                                            context.KeyFor(layer_, kAttentionOutputDropout));
  Tensor d_context = linear_backward(d_projected, Rows(s.context), params_.attention_output_weight,
                                     params_.attention_output_bias);
  ops::AttentionGrads d_qkv = ops::AttentionBackward(
      d_context.Reshaped(shape), s.query, s.key, s.value, s.attention_probs, key_mask,
      config_.num_attention_heads, attention_p, context.KeyFor(layer_, kAttentionProbsDropout));

  const Tensor x = Rows(s.input_mm);
  const Tensor dq = linear_backward(Rows(d_qkv.dq), x, params_.query_weight, params_.query_bias);
  const Tensor dk = linear_backward(Rows(d_qkv.dk), x, params_.key_weight, params_.key_bias);
  const Tensor dv = linear_backward(Rows(d_qkv.dv), x, params_.value_weight, params_.value_bias);
  // Summed into the residual branch in fp32 (autograd would first sum the three fp16
  // gradients of the shared fp16 input in fp16; fp32 is the more accurate choice).
  Tensor d_input = ops::Add(d_attention_sum, dq.Reshaped(shape), DType::kF32);
  d_input = ops::Add(d_input, dk.Reshaped(shape), DType::kF32);
  return ops::Add(d_input, dv.Reshaped(shape), DType::kF32);
}

}  // namespace xlmr::models
