#include "models/encoder/encoder_block.h"

#include <utility>

#include "framework/ops/activations.h"
#include "framework/ops/attention.h"
#include "framework/ops/dropout.h"
#include "framework/ops/elementwise.h"
#include "framework/ops/fused_attention.h"
#include "framework/ops/layer_norm.h"
#include "framework/ops/linear.h"
#include "framework/ops/residual_layer_norm.h"
#include "framework/ops/varlen_fused_attention.h"
#include "framework/profile/profiler.h"
#include "models/encoder/autocast.h"

namespace xlmr::models {
namespace {

// [B,S,X] -> [B*S,X] and back: Linear works on rows.
Tensor Rows(const Tensor& t) { return t.Reshaped({t.numel() / t.dim(-1), t.dim(-1)}); }

// Moves a saved tensor out (its slot becomes empty), so that it is freed with the last handle.
Tensor Take(Tensor& slot) { return std::exchange(slot, Tensor()); }

}  // namespace

void EncoderBlockSaved::Retain(recompute::BlockRecompute mode) {
  if (mode == recompute::BlockRecompute::kFull) {
    Tensor kept_input = std::move(input);
    Clear();
    input = std::move(kept_input);  // all that a recompute needs
    return;
  }
  if (input.storage() != input_mm.storage()) input = Tensor();  // backward reads input_mm
  if (mode == recompute::BlockRecompute::kSelective) {
    attention_probs = Tensor();
    attention_logsumexp = Tensor();
    context = Tensor();
  }
}

bool FusedAttentionApplies(const EncoderConfig& config, Device device, DType dtype) {
  return config.attention == AttentionImplementation::kFused &&
         ops::FusedAttentionSupported(device, dtype, config.head_dim());
}

float EncoderBlock::HiddenDropout(const PassContext& context) const {
  return context.training ? config_.hidden_dropout_prob : 0.0f;
}

float EncoderBlock::AttentionDropout(const PassContext& context) const {
  return context.training ? config_.attention_probs_dropout_prob : 0.0f;
}

Tensor EncoderBlock::Forward(const Tensor& input, const TokenLayout& tokens, const ParameterStore& store,
                             const PassContext& context, EncoderBlockSaved* saved) const {
  saved->input = input;
  Tensor attention_output;
  {
    profile::Scope scope("attention.fwd");
    attention_output = ForwardAttention(tokens, store, context, *saved);
  }
  profile::Scope scope("ffn.fwd");
  return ForwardFeedForward(attention_output, tokens, store, context, *saved);
}

void EncoderBlock::Recompute(recompute::BlockRecompute mode, const TokenLayout& tokens,
                             const ParameterStore& store, const PassContext& context,
                             EncoderBlockSaved* saved) const {
  switch (mode) {
    case recompute::BlockRecompute::kKeep:
      return;
    case recompute::BlockRecompute::kSelective: {
      profile::Scope scope("recompute.attention_core");
      ForwardAttentionCore(tokens, context, *saved);
      return;
    }
    case recompute::BlockRecompute::kFull: {
      profile::Scope scope("recompute");
      const Tensor input = saved->input;
      Forward(input, tokens, store, context, saved);  // the block output is not needed again
      return;
    }
  }
}

// LayerNorm(dropout(dense(attention(q, k, v))) + x), x = s.input.
Tensor EncoderBlock::ForwardAttention(const TokenLayout& tokens, const ParameterStore& store,
                                      const PassContext& context, EncoderBlockSaved& s) const {
  const DType mm = context.matmul_dtype();
  const Shape shape = s.input.shape();  // [B,S,H]
  auto weight = [&](int index) { return LinearWeight(store, index, context); };
  auto bias = [&](int index) { return LinearBias(store, index, context); };
  s.input_mm = InDType(s.input, mm);
  const Tensor x = Rows(s.input_mm);
  s.query = ops::Linear(x, weight(params_.query_weight), bias(params_.query_bias), mm).Reshaped(shape);
  s.key = ops::Linear(x, weight(params_.key_weight), bias(params_.key_bias), mm).Reshaped(shape);
  s.value = ops::Linear(x, weight(params_.value_weight), bias(params_.value_bias), mm).Reshaped(shape);
  ForwardAttentionCore(tokens, context, s);

  const Tensor projected = ops::Linear(Rows(s.context), weight(params_.attention_output_weight),
                                       bias(params_.attention_output_bias), mm);
  // The feed-forward's first product reads the output in the matmul dtype: its copy is made here.
  ops::ResidualLayerNormOutput norm = ops::DropoutAddLayerNorm(
      projected.Reshaped(shape), s.input, HiddenDropout(context), context.KeyFor(layer_, kAttentionOutputDropout),
      tokens.slots, tokens.num_slots(), store.param(params_.attention_norm_weight),
      store.param(params_.attention_norm_bias), config_.layer_norm_eps, mm);
  s.attention_sum = norm.sum;
  s.attention_mean = norm.mean;
  s.attention_rstd = norm.rstd;
  s.attention_output_mm = norm.y_half;
  return norm.y;
}

void EncoderBlock::ForwardAttentionCore(const TokenLayout& tokens, const PassContext& context,
                                        EncoderBlockSaved& s) const {
  const int heads = static_cast<int>(config_.num_attention_heads);
  const float p = AttentionDropout(context);
  const DropoutKey key = context.KeyFor(layer_, kAttentionProbsDropout);
  if (tokens.packed()) {  // the model takes packed inputs only where fused attention applies
    ops::FusedAttentionOutput attention =
        ops::VarlenFusedAttention(s.query, s.key, s.value, tokens.cu_seqlens, tokens.max_seqlen,
                                  heads, p, key, tokens.stride, tokens.cu_seqlens_on_device);
    s.context = attention.context;
    s.attention_logsumexp = attention.logsumexp;
    return;
  }
  if (FusedAttentionApplies(config_, s.query.device(), s.query.dtype())) {
    ops::FusedAttentionOutput attention = ops::FusedAttention(
        s.query, s.key, s.value, tokens.key_mask, heads, p, key, tokens.stride);
    s.context = attention.context;
    s.attention_logsumexp = attention.logsumexp;
    return;
  }
  ops::AttentionOutput attention = ops::Attention(s.query, s.key, s.value, tokens.key_mask, heads,
                                                  p, key, tokens.stride);
  s.context = attention.context;
  s.attention_probs = attention.probs;
}

// LayerNorm(dropout(dense(gelu(dense(a)))) + a), a = attention_output.
Tensor EncoderBlock::ForwardFeedForward(const Tensor& attention_output, const TokenLayout& tokens,
                                        const ParameterStore& store,
                                        const PassContext& context, EncoderBlockSaved& s) const {
  const DType mm = context.matmul_dtype();
  if (!s.attention_output_mm.defined()) s.attention_output_mm = InDType(attention_output, mm);
  s.intermediate =
      ops::Linear(Rows(s.attention_output_mm), LinearWeight(store, params_.intermediate_weight, context),
                  LinearBias(store, params_.intermediate_bias, context), mm);
  Tensor ffn = ops::Linear(ops::Gelu(s.intermediate), LinearWeight(store, params_.output_weight, context),
                           LinearBias(store, params_.output_bias, context), mm);
  ops::ResidualLayerNormOutput norm = ops::DropoutAddLayerNorm(
      ffn.Reshaped(attention_output.shape()), attention_output, HiddenDropout(context),
      context.KeyFor(layer_, kFeedForwardOutputDropout), tokens.slots, tokens.num_slots(),
      store.param(params_.output_norm_weight), store.param(params_.output_norm_bias), config_.layer_norm_eps,
      DType::kF32);
  s.output_sum = norm.sum;
  s.output_mean = norm.mean;
  s.output_rstd = norm.rstd;
  return norm.y;
}

Tensor EncoderBlock::LinearBackward(const Tensor& dy, const Tensor& x, int weight, int bias,
                                    ParameterStore& store, const PassContext& context) const {
  Tensor dw = store.grad(weight);
  Tensor db = store.grad(bias);
  return ops::LinearBackward(dy, x, LinearWeight(store, weight, context), &dw, &db,
                             context.matmul_dtype());
}

ops::ResidualLayerNormGrads EncoderBlock::SiteBackward(Tensor dy, Tensor sum, Tensor mean, Tensor rstd, int weight,
                                                      int bias, DropoutSite dropout_op, const TokenLayout& tokens,
                                                      ParameterStore& store, const PassContext& context) const {
  Tensor dw = store.grad(weight);
  Tensor db = store.grad(bias);
  return ops::DropoutAddLayerNormBackward(dy, sum, mean, rstd, store.param(weight), HiddenDropout(context),
                                          context.KeyFor(layer_, dropout_op), tokens.slots, tokens.num_slots(),
                                          context.matmul_dtype(), &dw, &db);
}

Tensor EncoderBlock::Backward(Tensor d_output, const TokenLayout& tokens, EncoderBlockSaved* saved,
                              ParameterStore& store, const PassContext& context) const {
  XLMR_CHECK((saved->attention_probs.defined() || saved->attention_logsumexp.defined()) &&
             saved->intermediate.defined())
      << "layer " << layer_ << ": Backward needs the complete saved activations (Recompute first)";
  Tensor d_attention_output;
  {
    profile::Scope scope("ffn.bwd");
    d_attention_output = BackwardFeedForward(std::move(d_output), tokens, *saved, store, context);
  }
  profile::Scope scope("attention.bwd");
  Tensor d_input = BackwardAttention(std::move(d_attention_output), tokens, *saved, store, context);
  saved->Clear();
  return d_input;
}

Tensor EncoderBlock::BackwardFeedForward(Tensor d_output, const TokenLayout& tokens,
                                         EncoderBlockSaved& s, ParameterStore& store,
                                         const PassContext& context) const {
  ops::ResidualLayerNormGrads site =
      SiteBackward(Take(d_output), Take(s.output_sum), Take(s.output_mean), Take(s.output_rstd),
                   params_.output_norm_weight, params_.output_norm_bias, kFeedForwardOutputDropout, tokens, store,
                   context);
  const Tensor d_output_sum = std::move(site.d_sum);
  Tensor d_ffn = Rows(Take(site.d_x));
  // GELU's output is recomputed from its input rather than kept from the forward: the same
  // bits, [B,S,I] less held per block, for one element-wise pass.
  Tensor d_activated = LinearBackward(Take(d_ffn), ops::Gelu(s.intermediate), params_.output_weight,
                                      params_.output_bias, store, context);
  Tensor d_intermediate = ops::GeluBackward(Take(d_activated), Take(s.intermediate));
  const Tensor d_attention_output_mm =
      LinearBackward(Take(d_intermediate), Rows(Take(s.attention_output_mm)),
                     params_.intermediate_weight, params_.intermediate_bias, store, context);
  // The residual branch and the projection branch meet in fp32.
  return ops::Add(d_output_sum, d_attention_output_mm.Reshaped(d_output_sum.shape()), DType::kF32);
}

ops::AttentionGrads EncoderBlock::AttentionCoreBackward(Tensor d_context, const TokenLayout& tokens,
                                                       EncoderBlockSaved& s,
                                                       const PassContext& context) const {
  const int heads = static_cast<int>(config_.num_attention_heads);
  const float p = AttentionDropout(context);
  const DropoutKey key = context.KeyFor(layer_, kAttentionProbsDropout);
  if (tokens.packed()) {
    return ops::VarlenFusedAttentionBackward(
        Take(d_context), Take(s.query), Take(s.key), Take(s.value), Take(s.context),
        Take(s.attention_logsumexp), tokens.cu_seqlens, tokens.max_seqlen, heads, p, key,
        tokens.stride, tokens.cu_seqlens_on_device);
  }
  if (s.attention_logsumexp.defined()) {  // fused: reads the context it produced, not the probs
    return ops::FusedAttentionBackward(Take(d_context), Take(s.query), Take(s.key), Take(s.value),
                                       Take(s.context), Take(s.attention_logsumexp), tokens.key_mask, heads,
                                       p, key, tokens.stride);
  }
  s.context = Tensor();  // eager: its backward reads the probabilities instead
  return ops::AttentionBackward(Take(d_context), Take(s.query), Take(s.key), Take(s.value),
                                Take(s.attention_probs), tokens.key_mask, heads, p, key,
                                tokens.stride);
}

Tensor EncoderBlock::BackwardAttention(Tensor d_attention_output, const TokenLayout& tokens,
                                       EncoderBlockSaved& s, ParameterStore& store,
                                       const PassContext& context) const {
  const Shape shape = s.input_mm.shape();
  ops::ResidualLayerNormGrads site =
      SiteBackward(Take(d_attention_output), Take(s.attention_sum), Take(s.attention_mean), Take(s.attention_rstd),
                   params_.attention_norm_weight, params_.attention_norm_bias, kAttentionOutputDropout, tokens,
                   store, context);
  const Tensor d_attention_sum = std::move(site.d_sum);
  Tensor d_projected = Rows(Take(site.d_x));
  Tensor d_context = LinearBackward(Take(d_projected), Rows(s.context), params_.attention_output_weight,
                                    params_.attention_output_bias, store, context);
  ops::AttentionGrads d_qkv = AttentionCoreBackward(Take(d_context).Reshaped(shape), tokens, s, context);

  const Tensor x = Rows(Take(s.input_mm));
  s.input = Tensor();  // fp32: the same tensor as input_mm
  // Summed into the residual branch in fp32 (autograd would first sum the three fp16
  // gradients of the shared fp16 input in fp16; fp32 is the more accurate choice).
  auto add_projection_grad = [&](const Tensor& sum, Tensor d_projection, int weight, int bias) {
    const Tensor dx = LinearBackward(Rows(Take(d_projection)), x, weight, bias, store, context);
    return ops::Add(sum, dx.Reshaped(shape), DType::kF32);
  };
  Tensor d_input = add_projection_grad(d_attention_sum, std::move(d_qkv.dq), params_.query_weight,
                                       params_.query_bias);
  d_input = add_projection_grad(d_input, std::move(d_qkv.dk), params_.key_weight, params_.key_bias);
  return add_projection_grad(d_input, std::move(d_qkv.dv), params_.value_weight, params_.value_bias);
}

}  // namespace xlmr::models
