#include "models/encoder/embeddings.h"

#include "framework/ops/dropout.h"
#include "framework/ops/elementwise.h"
#include "framework/ops/embedding.h"
#include "framework/ops/layer_norm.h"
#include "framework/ops/position_ids.h"
#include "models/families.h"

namespace xlmr::models {

Tensor Embeddings::PositionIds(const Tensor& input_ids, const TokenLayout& tokens) const {
  const bool from_zero = config_.family->positions_from_zero;
  // RobertaPackedPositionIds numbers from pad_id + 1: -1 gives BERT's 0, 1, ...
  const auto first_minus_one = static_cast<int32_t>(from_zero ? -1 : config_.pad_token_id);
  // Packed: no padding to count past, the numbering restarts with every sequence.
  if (tokens.packed()) {
    return ops::RobertaPackedPositionIds(tokens.cu_seqlens, first_minus_one, input_ids.device());
  }
  return from_zero ? ops::AbsolutePositionIds(input_ids)
                   : ops::RobertaPositionIds(input_ids, static_cast<int32_t>(config_.pad_token_id));
}

Tensor Embeddings::Forward(const Tensor& input_ids, const Tensor& token_type_ids,
                           const TokenLayout& tokens, const ParameterStore& store,
                           const PassContext& context, EmbeddingsSaved* saved) const {
  EmbeddingsSaved& s = *saved;
  s.input_ids = input_ids;
  s.position_ids = PositionIds(input_ids, tokens);
  s.type_ids = token_type_ids.defined() ? token_type_ids
                                        : Tensor::Zeros(input_ids.shape(), DType::kI32, input_ids.device());
  const Tensor word = ops::Embedding(store.param(params_.word), input_ids, DType::kF32);
  const Tensor type = ops::Embedding(store.param(params_.token_type), s.type_ids, DType::kF32);
  const Tensor position = ops::Embedding(store.param(params_.position), s.position_ids, DType::kF32);
  s.sum = ops::Add(ops::Add(word, type, DType::kF32), position, DType::kF32);
  ops::LayerNormOutput norm = ops::LayerNorm(s.sum, store.param(params_.norm_weight),
                                             store.param(params_.norm_bias), config_.layer_norm_eps,
                                             DType::kF32);
  s.mean = norm.mean;
  s.rstd = norm.rstd;
  const float p = context.training ? config_.hidden_dropout_prob : 0.0f;
  return TokenDropout(norm.y, p, context.KeyFor(config_.num_hidden_layers, kEmbeddingDropout),
                      tokens);
}

void Embeddings::Backward(const Tensor& d_output, const EmbeddingsSaved& s,
                          const TokenLayout& tokens, ParameterStore& store,
                          const PassContext& context) const {
  const float p = context.training ? config_.hidden_dropout_prob : 0.0f;
  const Tensor d_norm = TokenDropoutBackward(
      d_output, p, context.KeyFor(config_.num_hidden_layers, kEmbeddingDropout), tokens);
  Tensor d_norm_weight = store.grad(params_.norm_weight);
  Tensor d_norm_bias = store.grad(params_.norm_bias);
  const Tensor d_sum = ops::LayerNormBackward(d_norm, s.sum, store.param(params_.norm_weight),
                                              s.mean, s.rstd, &d_norm_weight, &d_norm_bias);
  Tensor d_word = store.grad(params_.word);
  Tensor d_position = store.grad(params_.position);
  Tensor d_type = store.grad(params_.token_type);
  ops::EmbeddingBackward(d_sum, s.input_ids, config_.pad_token_id, &d_word);
  // BERT's position table has no padding row: every position learns.
  const int64_t position_padding =
      config_.family->positions_from_zero ? -1 : config_.pad_token_id;
  ops::EmbeddingBackward(d_sum, s.position_ids, position_padding, &d_position);
  ops::EmbeddingBackward(d_sum, s.type_ids, /*padding_idx=*/-1, &d_type);
}

}  // namespace xlmr::models
