// One post-LN XLM-R encoder layer (HF XLMRobertaLayer): self-attention, dense + dropout +
// residual + LayerNorm, feed-forward (dense, exact GELU, dense) + dropout + residual + LayerNorm.
//
// Forward fills an EncoderBlockSaved with exactly what Backward needs; nothing else is kept.
// Recompute (activation checkpointing) is running Forward again from the saved block input
// right before Backward: dropout masks are keyed by (step, micro-step, layer, site), so the
// recomputed activations are bit-identical.
//
// Precision (PyTorch autocast): the residual stream and LayerNorms are fp32; every matrix
// product consumes a `matmul_dtype` copy of its input (fp16 under --fp16) and emits that dtype.
#ifndef XLMR_MODELS_XLMR_ENCODER_BLOCK_H_
#define XLMR_MODELS_XLMR_ENCODER_BLOCK_H_

#include "framework/tensor/parameter_store.h"
#include "framework/tensor/tensor.h"
#include "models/xlmr/config.h"
#include "models/xlmr/forward_context.h"
#include "models/xlmr/parameter_layout.h"

namespace xlmr::models {

// Shapes: B batch, S sequence, H hidden, I intermediate, N heads; "mm" = matmul dtype.
struct EncoderBlockSaved {
  Tensor input;              // [B,S,H] f32: block input (the residual of the attention sub-block)
  Tensor input_mm;           // [B,S,H] mm: what Q/K/V projections read (== input in fp32 mode)
  Tensor query, key, value;  // [B,S,H] mm
  Tensor attention_probs;    // [B,N,S,S] softmax before dropout
  Tensor context;            // [B,S,H] mm: attention output before the output projection
  Tensor attention_sum;      // [B,S,H] f32: dropout(dense(context)) + input, LayerNorm's input
  Tensor attention_mean, attention_rstd;  // [B*S] f32
  Tensor attention_output;   // [B,S,H] f32: the residual of the feed-forward sub-block
  Tensor attention_output_mm;  // [B,S,H] mm: what the intermediate projection reads
  Tensor intermediate;       // [B,S,I] mm: before GELU
  Tensor activated;          // [B,S,I] mm: after GELU
  Tensor output_sum;         // [B,S,H] f32: LayerNorm's input
  Tensor output_mean, output_rstd;  // [B*S] f32

  bool empty() const { return !input.defined(); }
  void Clear() { *this = EncoderBlockSaved(); }
};

class EncoderBlock {
 public:
  EncoderBlock(const XlmrConfig& config, const EncoderBlockParams& params, int layer)
      : config_(config), params_(params), layer_(layer) {}

  // [in] input [B,S,H] f32, key_mask [B,S] i32 (1 real, 0 padding).
  // [out] saved: filled (replaces its content). Returns the block output [B,S,H] f32.
  Tensor Forward(const Tensor& input, const Tensor& key_mask, const ParameterStore& store,
                 const ForwardContext& context, EncoderBlockSaved* saved) const;

  // [in] d_output [B,S,H] f32, saved from Forward. Parameter gradients are accumulated (+=)
  // into store's gradient buffer. Returns d_input [B,S,H] f32.
  Tensor Backward(const Tensor& d_output, const Tensor& key_mask, const EncoderBlockSaved& saved,
                  ParameterStore& store, const ForwardContext& context) const;

 private:
  // A weight as the matrix products read it: the fp16 working copy under fp16, else the master.
  Tensor MatmulWeight(const ParameterStore& store, int index, const ForwardContext& context) const;

  const XlmrConfig& config_;
  EncoderBlockParams params_;
  int layer_;
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_XLMR_ENCODER_BLOCK_H_
