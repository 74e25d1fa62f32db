#include "models/xlmr/model.h"

#include <utility>

namespace xlmr::models {

XlmrForSequenceClassification::XlmrForSequenceClassification(XlmrConfig config, Device device)
    : config_(std::move(config)),
      layout_(MakeParameterLayout(config_)),
      store_(layout_.specs, device),
      embeddings_(config_, layout_.embeddings),
      head_(config_, layout_.head, static_cast<uint32_t>(config_.num_hidden_layers + 1)) {
  for (int layer = 0; layer < config_.num_hidden_layers; ++layer) {
    blocks_.emplace_back(config_, layout_.blocks[layer], layer);
  }
  blocks_saved_.resize(config_.num_hidden_layers);
}

void XlmrForSequenceClassification::SetRecomputePlan(std::vector<bool> recompute) {
  XLMR_CHECK(recompute.empty() || static_cast<int>(recompute.size()) == num_blocks());
  recompute_ = std::move(recompute);
}

bool XlmrForSequenceClassification::Recomputes(int block) const {
  return !recompute_.empty() && recompute_[block];
}

Tensor XlmrForSequenceClassification::Forward(const ModelInputs& inputs,
                                              const ForwardContext& context,
                                              bool keep_activations) {
  ReleaseActivations();
  key_mask_ = inputs.attention_mask;
  Tensor hidden = embeddings_.Forward(inputs.input_ids, store_, context, &embeddings_saved_);
  for (int i = 0; i < num_blocks(); ++i) {
    EncoderBlockSaved& saved = blocks_saved_[i];
    hidden = blocks_[i].Forward(hidden, key_mask_, store_, context, &saved);
    if (!keep_activations) {
      saved.Clear();
    } else if (Recomputes(i)) {
      Tensor input = saved.input;
      saved.Clear();
      saved.input = std::move(input);  // all that a recompute needs
    }
  }
  encoder_output_ = hidden;
  Tensor logits = head_.Forward(hidden, store_, context, &head_saved_);
  if (!keep_activations) ReleaseActivations();
  return logits;
}

void XlmrForSequenceClassification::Backward(const Tensor& d_logits, const ForwardContext& context,
                                             const train::BucketReadyFn& on_bucket_ready) {
  XLMR_CHECK(encoder_output_.defined()) << "Backward without a Forward that kept activations";
  Tensor d_hidden = head_.Backward(d_logits, head_saved_, store_, context);
  head_saved_.Clear();
  encoder_output_ = Tensor();
  on_bucket_ready(HeadBucket());
  for (int i = num_blocks() - 1; i >= 0; --i) {
    EncoderBlockSaved& saved = blocks_saved_[i];
    if (Recomputes(i)) {
      const Tensor input = saved.input;
      blocks_[i].Forward(input, key_mask_, store_, context, &saved);
    }
    d_hidden = blocks_[i].Backward(d_hidden, key_mask_, saved, store_, context);
    saved.Clear();
    on_bucket_ready(BlockBucket(config_, i));
  }
  embeddings_.Backward(d_hidden, embeddings_saved_, store_, context);
  embeddings_saved_.Clear();
  on_bucket_ready(EmbeddingBucket(config_));
  key_mask_ = Tensor();
}

void XlmrForSequenceClassification::ReleaseActivations() {
  key_mask_ = Tensor();
  embeddings_saved_.Clear();
  for (EncoderBlockSaved& saved : blocks_saved_) saved.Clear();
  encoder_output_ = Tensor();
  head_saved_.Clear();
}

}  // namespace xlmr::models
