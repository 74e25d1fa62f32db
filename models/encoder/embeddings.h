// The embeddings (HF XLMRobertaEmbeddings, BertEmbeddings): (word + token_type) + position,
// LayerNorm, dropout. Positions follow the family (ModelFamily::positions_from_zero):
// RoBERTa's (ops::RobertaPositionIds, computed on the ids' device) number real tokens pad_id + 1,
// pad_id + 2, ... counting only non-padding tokens, and padding tokens get pad_id; BERT's are
// 0, 1, ... for every token (ops::AbsolutePositionIds). Packed batches restart the numbering with
// every sequence. Token types come from the inputs (ModelInputs::token_type_ids), all 0 when
// absent.
#ifndef XLMR_MODELS_ENCODER_EMBEDDINGS_H_
#define XLMR_MODELS_ENCODER_EMBEDDINGS_H_

#include "framework/tensor/parameter_store.h"
#include "framework/tensor/tensor.h"
#include "models/encoder/config.h"
#include "models/encoder/parameter_layout.h"
#include "models/encoder/pass_context.h"
#include "models/encoder/token_layout.h"

namespace xlmr::models {

struct EmbeddingsSaved {
  Tensor input_ids;     // [B,S] i32
  Tensor position_ids;  // [B,S] i32
  Tensor type_ids;      // [B,S] i32
  Tensor sum;           // [B,S,H] f32: LayerNorm's input
  Tensor mean, rstd;    // [B*S] f32
  void Clear() { *this = EmbeddingsSaved(); }
};

class Embeddings {
 public:
  Embeddings(const EncoderConfig& config, const EmbeddingParams& params)
      : config_(config), params_(params) {}

  // Returns the encoder input [B,S,H] f32; its dropout draws at `tokens`' slots.
  // token_type_ids: shaped as input_ids, on its device, or undefined (all 0).
  Tensor Forward(const Tensor& input_ids, const Tensor& token_type_ids, const TokenLayout& tokens,
                 const ParameterStore& store, const PassContext& context,
                 EmbeddingsSaved* saved) const;
  // Accumulates the embedding tables' and the LayerNorm's gradients; padding rows (token
  // pad_id, and RoBERTa's position pad_id) get none, as nn.Embedding(padding_idx=pad_id).
  void Backward(const Tensor& d_output, const EmbeddingsSaved& saved, const TokenLayout& tokens,
                ParameterStore& store, const PassContext& context) const;

 private:
  // The family's position ids for `input_ids` ([B,S], or [T] packed).
  Tensor PositionIds(const Tensor& input_ids, const TokenLayout& tokens) const;

  const EncoderConfig& config_;
  EmbeddingParams params_;
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_EMBEDDINGS_H_
