// One post-LN XLM-R encoder layer (HF XLMRobertaLayer): self-attention, dense + dropout +
// residual + LayerNorm, feed-forward (dense, exact GELU, dense) + dropout + residual + LayerNorm.
//
// Forward fills an EncoderBlockSaved with what Backward needs and what a recompute starts
// from. Activation checkpointing (framework/recompute/recompute_plan.h) is two calls around
// that: saved.Retain(mode) right after Forward frees what the plan drops, and Recompute(mode)
// right before Backward computes it again. Dropout masks are keyed by (step, micro-step,
// layer, site), so the recomputed activations are bit-identical and so is everything after.
// Backward consumes the saved activations, freeing each right after its last use (as autograd
// frees a node's saved tensors), so a block's backward never holds what it is done with.
//
// Precision (PyTorch autocast): the residual stream and LayerNorms are fp32; every matrix
// product consumes a `matmul_dtype` copy of its input (fp16 under --fp16) and emits that dtype.
#ifndef XLMR_MODELS_ENCODER_ENCODER_BLOCK_H_
#define XLMR_MODELS_ENCODER_ENCODER_BLOCK_H_

#include "framework/ops/attention.h"
#include "framework/ops/residual_layer_norm.h"
#include "framework/recompute/recompute_plan.h"
#include "framework/tensor/parameter_store.h"
#include "framework/tensor/tensor.h"
#include "models/encoder/config.h"
#include "models/encoder/parameter_layout.h"
#include "models/encoder/pass_context.h"
#include "models/encoder/token_layout.h"

namespace xlmr::models {

// Shapes: B batch, S sequence, H hidden, I intermediate, N heads; "mm" = matmul dtype.
//
// Backward reads everything but `input`, which only a whole-block recompute reads (under fp32
// it is the same tensor as input_mm). The attention core is what kSelective drops: with eager
// attention attention_probs and context (the [B,N,S,S] probabilities are the s^2 term of a
// block's activations); with fused attention attention_logsumexp and context, which hold no
// s^2 term (so the planner does not offer kSelective then). One op call recomputes the core
// from q, k, v.
struct EncoderBlockSaved {
  Tensor input;              // [B,S,H] f32: block input, what a whole-block recompute starts from
  Tensor input_mm;           // [B,S,H] mm: what Q/K/V projections read (== input in fp32 mode)
  Tensor query, key, value;  // [B,S,H] mm
  Tensor attention_probs;    // [B,N,S,S] f32: softmax before dropout (eager attention's core)
  Tensor attention_logsumexp;  // [B,N,S] f32: per-row softmax statistic (fused attention's core)
  Tensor context;            // [B,S,H] mm: attention output before the output projection (core)
  Tensor attention_sum;      // [B,S,H] f32: dropout(dense(context)) + input, LayerNorm's input
  Tensor attention_mean, attention_rstd;  // [B*S] f32
  Tensor attention_output_mm;  // [B,S,H] mm: LayerNorm's output as the intermediate projection reads it
  Tensor intermediate;       // [B,S,I] mm: before GELU (its output is recomputed in backward)
  Tensor output_sum;         // [B,S,H] f32: LayerNorm's input
  Tensor output_mean, output_rstd;  // [B*S] f32

  bool empty() const { return !input.defined() && !input_mm.defined(); }
  void Clear() { *this = EncoderBlockSaved(); }
  // Frees what `mode` does not keep between forward and backward:
  //   kKeep       `input` when it is a separate tensor (fp16: backward reads input_mm);
  //   kSelective  that, and the attention core;
  //   kFull       everything but `input`.
  void Retain(recompute::BlockRecompute mode);
};

// Whether encoder blocks of `config` run fused attention on `device` for activations of
// `dtype`: config.attention is kFused and a fused kernel exists (ops::FusedAttentionSupported).
bool FusedAttentionApplies(const EncoderConfig& config, Device device, DType dtype);

class EncoderBlock {
 public:
  EncoderBlock(const EncoderConfig& config, const EncoderBlockParams& params, int layer)
      : config_(config), params_(params), layer_(layer) {}

  // [in] input [B,S,H] f32; tokens: the pass's layout (key mask [B,S], dropout slots).
  // [out] saved: filled (replaces its content). Returns the block output [B,S,H] f32.
  Tensor Forward(const Tensor& input, const TokenLayout& tokens, const ParameterStore& store,
                 const PassContext& context, EncoderBlockSaved* saved) const;

  // [in,out] saved: as saved->Retain(mode) left it after the Forward of this pass; on return,
  // holding everything Backward reads, bit-identical to what Forward had filled (after a whole
  // recompute `input` is still there too: Retain(kKeep) drops what Backward does not read).
  // `context` must be the Forward's.
  void Recompute(recompute::BlockRecompute mode, const TokenLayout& tokens, const ParameterStore& store,
                 const PassContext& context, EncoderBlockSaved* saved) const;

  // [in] d_output [B,S,H] f32 (taken: released once consumed). [in,out] saved: holding what
  // Backward reads (after Recompute); consumed, empty on return. Parameter gradients are
  // accumulated (+=) into store's gradient buffer. Returns d_input [B,S,H] f32.
  Tensor Backward(Tensor d_output, const TokenLayout& tokens, EncoderBlockSaved* saved,
                  ParameterStore& store, const PassContext& context) const;

 private:
  // Forward of the attention sub-block from s.input; returns its output [B,S,H] f32.
  Tensor ForwardAttention(const TokenLayout& tokens, const ParameterStore& store,
                          const PassContext& context, EncoderBlockSaved& s) const;
  // s.context and s.attention_probs from s.query, key, value.
  void ForwardAttentionCore(const TokenLayout& tokens, const PassContext& context,
                            EncoderBlockSaved& s) const;
  // Forward of the feed-forward sub-block from `attention_output` (the attention sub-block's
  // output, its residual); returns the block output.
  Tensor ForwardFeedForward(const Tensor& attention_output, const TokenLayout& tokens,
                            const ParameterStore& store,
                            const PassContext& context, EncoderBlockSaved& s) const;
  // Backward of the feed-forward sub-block; returns d(attention_output) [B,S,H] f32.
  Tensor BackwardFeedForward(Tensor d_output, const TokenLayout& tokens, EncoderBlockSaved& s,
                             ParameterStore& store,
                             const PassContext& context) const;
  // Backward of the attention sub-block; returns d(input) [B,S,H] f32.
  Tensor BackwardAttention(Tensor d_attention_output, const TokenLayout& tokens, EncoderBlockSaved& s,
                           ParameterStore& store, const PassContext& context) const;

  // Backward of the attention core (eager or fused, whichever Forward ran); consumes
  // s.query, key, value, context and the core's statistics.
  ops::AttentionGrads AttentionCoreBackward(Tensor d_context, const TokenLayout& tokens,
                                            EncoderBlockSaved& s, const PassContext& context) const;
  // Backward of a Linear whose parameters are store entries `weight` and `bias`.
  Tensor LinearBackward(const Tensor& dy, const Tensor& x, int weight, int bias,
                        ParameterStore& store, const PassContext& context) const;
  // Backward of a residual site (ops::DropoutAddLayerNorm) from its saved sum and statistics,
  // LayerNorm parameters `weight` and `bias`, dropout op `dropout_op` of this layer.
  ops::ResidualLayerNormGrads SiteBackward(Tensor dy, Tensor sum, Tensor mean, Tensor rstd, int weight, int bias,
                                           DropoutSite dropout_op, const TokenLayout& tokens,
                                           ParameterStore& store, const PassContext& context) const;
  float HiddenDropout(const PassContext& context) const;
  float AttentionDropout(const PassContext& context) const;

  const EncoderConfig& config_;
  EncoderBlockParams params_;
  int layer_;
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_ENCODER_BLOCK_H_
