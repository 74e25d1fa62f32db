#include "models/encoder/model.h"

#include <utility>

#include "framework/profile/profiler.h"

namespace xlmr::models {

EncoderModel::EncoderModel(EncoderConfig config, Device device)
    : config_(std::move(config)),
      layout_(MakeParameterLayout(config_)),
      store_(layout_.specs, device),
      embeddings_(config_, layout_.embeddings),
      head_(MakeTaskHead(config_, layout_, static_cast<uint32_t>(config_.num_hidden_layers + 1))) {
  for (int layer = 0; layer < config_.num_hidden_layers; ++layer) {
    blocks_.emplace_back(config_, layout_.blocks[layer], layer);
  }
  blocks_saved_.resize(config_.num_hidden_layers);
}

bool EncoderModel::TakesPackedInputs(DType autocast) const {
  // The question-answering head reads padded windows ([2, B, S] logits).
  return config_.task != Task::kQuestionAnswering &&
         FusedAttentionApplies(config_, store_.master().device(), autocast);
}

void EncoderModel::SetRecomputePlan(recompute::RecomputePlan plan) {
  XLMR_CHECK(plan.blocks.empty() || static_cast<int>(plan.blocks.size()) == num_blocks())
      << "recompute plan '" << plan.ToString() << "' for " << num_blocks() << " blocks";
  plan_ = std::move(plan);
}

Tensor EncoderModel::Forward(const ModelInputs& inputs,
                                              const PassContext& context,
                                              bool keep_activations) {
  ReleaseActivations();
  Tensor hidden;
  {
    profile::Scope scope("embeddings.fwd");
    hidden = ForwardEmbeddings(inputs, context);
  }
  for (int i = 0; i < num_blocks(); ++i) {
    {
      profile::Scope scope("layer", i);
      hidden = ForwardBlock(i, hidden, context);
    }
    if (keep_activations) {
      blocks_saved_[i].Retain(plan_.ModeOf(i));
    } else {
      blocks_saved_[i].Clear();
    }
  }
  Tensor logits;
  {
    profile::Scope scope("head.fwd");
    logits = ForwardHead(hidden, context);
  }
  if (!keep_activations) ReleaseActivations();
  return logits;
}

void EncoderModel::Backward(const Tensor& d_logits, const PassContext& context,
                                             const train::BucketReadyFn& on_bucket_ready) {
  XLMR_CHECK(encoder_output_.defined()) << "Backward without a Forward that kept activations";
  Tensor d_hidden;
  {
    profile::Scope scope("head.bwd");
    d_hidden = BackwardHead(d_logits, context);
  }
  on_bucket_ready(HeadBucket());
  for (int i = num_blocks() - 1; i >= 0; --i) {
    {
      profile::Scope scope("layer", i);
      d_hidden = BackwardBlock(i, plan_.ModeOf(i), std::move(d_hidden), context);
    }
    on_bucket_ready(BlockBucket(config_, i));
  }
  {
    profile::Scope scope("embeddings.bwd");
    BackwardEmbeddings(d_hidden, context);
  }
  on_bucket_ready(EmbeddingBucket(config_));
}

void EncoderModel::ReleaseActivations() {
  tokens_ = TokenLayout();
  embeddings_saved_.Clear();
  for (EncoderBlockSaved& saved : blocks_saved_) saved.Clear();
  encoder_output_ = Tensor();
  head_->Clear();
}

Tensor EncoderModel::ForwardEmbeddings(const ModelInputs& inputs,
                                                        const PassContext& context) {
  // The dropout slots' stride is the longest sequence the model takes, whatever the batch's
  // padded length (models/encoder/token_layout.h).
  const int64_t stride = config_.max_sequence_length();
  tokens_ = inputs.packed()
                ? PackedTokenLayout(inputs.cu_seqlens, inputs.max_seqlen, inputs.input_ids.numel(),
                                    stride, inputs.input_ids.device())
                : PaddedTokenLayout(inputs.attention_mask, stride);
  return embeddings_.Forward(inputs.input_ids, inputs.token_type_ids, tokens_, store_, context,
                             &embeddings_saved_);
}

Tensor EncoderModel::ForwardBlock(int i, const Tensor& hidden,
                                                   const PassContext& context) {
  return blocks_[i].Forward(hidden, tokens_, store_, context, &blocks_saved_[i]);
}

Tensor EncoderModel::ForwardHead(const Tensor& encoder_output,
                                                  const PassContext& context) {
  encoder_output_ = encoder_output;
  return head_->Forward(encoder_output, tokens_, store_, context);
}

Tensor EncoderModel::BackwardHead(const Tensor& d_logits,
                                                   const PassContext& context) {
  Tensor d_hidden = head_->Backward(d_logits, tokens_, store_, context);
  encoder_output_ = Tensor();
  return d_hidden;
}

Tensor EncoderModel::BackwardBlock(int i, recompute::BlockRecompute mode,
                                                    Tensor d_output, const PassContext& context) {
  EncoderBlockSaved& saved = blocks_saved_[i];
  blocks_[i].Recompute(mode, tokens_, store_, context, &saved);
  saved.Retain(recompute::BlockRecompute::kKeep);  // a whole recompute refilled `input` too
  return blocks_[i].Backward(std::move(d_output), tokens_, &saved, store_, context);
}

void EncoderModel::BackwardEmbeddings(const Tensor& d_hidden,
                                                       const PassContext& context) {
  embeddings_.Backward(d_hidden, embeddings_saved_, tokens_, store_, context);
  embeddings_saved_.Clear();
  tokens_ = TokenLayout();
}

}  // namespace xlmr::models
