// EncoderModel: the whole model (embeddings, encoder blocks, the task's head: HF's
// XLMRobertaForSequenceClassification or XLMRobertaForTokenClassification, EncoderConfig::task)
// with explicit Forward and Backward, parameters in one ParameterStore.
//
// Forward keeps, per block, what the recompute plan says that block keeps
// (framework/recompute/recompute_plan.h): everything its backward needs (EncoderBlockSaved),
// all but the attention core, or only its input. Backward recomputes what was dropped right
// before that block's backward. Backward walks the blocks last to first and reports each
// completed gradient bucket (head, last block, ..., embeddings), so a synchroniser can start
// reducing it while backward goes on.
#ifndef XLMR_MODELS_ENCODER_MODEL_H_
#define XLMR_MODELS_ENCODER_MODEL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "framework/recompute/memory_model.h"
#include "framework/recompute/recompute_plan.h"
#include "framework/tensor/parameter_store.h"
#include "framework/tensor/tensor.h"
#include "models/encoder/config.h"
#include "models/encoder/embeddings.h"
#include "models/encoder/encoder_block.h"
#include "models/encoder/parameter_layout.h"
#include "models/encoder/pass_context.h"
#include "models/encoder/task_head.h"

namespace xlmr::models {

class EncoderModel final : public train::TrainableModel {
 public:
  EncoderModel(EncoderConfig config, Device device);

  const EncoderConfig& config() const { return config_; }
  const ParameterLayout& layout() const { return layout_; }
  ParameterStore& parameters() override { return store_; }
  const ParameterStore& parameters() const { return store_; }
  int num_blocks() const override { return static_cast<int>(config_.num_hidden_layers); }

  // Packed inputs (--padding_free) run the variable-length fused attention, so they are taken
  // wherever fused attention applies (FusedAttentionApplies for the pass's matmul dtype);
  // eager attention takes padded batches only.
  bool TakesPackedInputs(DType autocast) const override;

  // Empty (the default) keeps everything; otherwise one entry per block.
  void SetRecomputePlan(recompute::RecomputePlan plan) override;
  const recompute::RecomputePlan& recompute_plan() const { return plan_; }

  // Returns logits (matmul dtype): [B, num_labels], or [B, S, num_labels] for token
  // classification ([T, num_labels] for packed inputs). Keeps the activations for Backward when
  // `keep_activations`; evaluation passes false and keeps nothing.
  Tensor Forward(const ModelInputs& inputs, const PassContext& context,
                 bool keep_activations) override;

  // [in] d_logits, shaped as the logits (any float dtype): the gradient of the (scaled) loss.
  // Accumulates every parameter gradient (+=) and calls on_bucket_ready(bucket) as each
  // bucket's gradients are final for this pass. Frees the saved activations as it goes.
  void Backward(const Tensor& d_logits, const PassContext& context,
                const train::BucketReadyFn& on_bucket_ready) override;

  // Drops any saved activations (e.g. when a step is abandoned).
  void ReleaseActivations() override;

  // The probe of the memory model (memory_probe.cc): runs the embeddings, ONE encoder block
  // and the head, forward, cross-entropy and backward, on synthetic inputs of `shape` (padded:
  // [B, S] with no padding; packed: B sequences of T tokens in all, T split as evenly as
  // possible), phase by phase through the same functions as Forward and Backward, and reads
  // the activation bytes of each phase from the device's MemoryStats. Every block has the same
  // shapes, so the block's numbers stand for all. A packed shape needs TakesPackedInputs.
  // [in] context: the training pass's precision and dropout (training must be true; fp16
  //      needs parameters().EnableHalfCopy() first).
  // Side effects: drops saved activations, zeroes the gradient buffer (the probe accumulated
  // into it) and resets the device's MemoryStats peaks. external_bytes is left 0.
  recompute::PassMemory MeasurePassMemory(const recompute::BatchShape& shape,
                                          const PassContext& context) override;

 private:
  // The phases of one pass, in execution order. Forward/Backward and the probe share them.
  Tensor ForwardEmbeddings(const ModelInputs& inputs, const PassContext& context);
  // Runs block i into blocks_saved_[i] (complete); returns its output.
  Tensor ForwardBlock(int i, const Tensor& hidden, const PassContext& context);
  Tensor ForwardHead(const Tensor& encoder_output, const PassContext& context);
  // Returns d(encoder output); frees the head's activations and the encoder output.
  Tensor BackwardHead(const Tensor& d_logits, const PassContext& context);
  // Recomputes what `mode` dropped, runs block i's backward (which frees its activations and
  // d_output as it consumes them); returns d(block input).
  Tensor BackwardBlock(int i, recompute::BlockRecompute mode, Tensor d_output,
                       const PassContext& context);
  void BackwardEmbeddings(const Tensor& d_hidden, const PassContext& context);

  EncoderConfig config_;
  ParameterLayout layout_;
  ParameterStore store_;
  Embeddings embeddings_;
  std::vector<EncoderBlock> blocks_;
  std::unique_ptr<TaskHead> head_;
  recompute::RecomputePlan plan_;

  // Saved between Forward and Backward.
  TokenLayout tokens_;  // the pass's layout: key mask and dropout slots
  EmbeddingsSaved embeddings_saved_;
  std::vector<EncoderBlockSaved> blocks_saved_;
  Tensor encoder_output_;
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_MODEL_H_
