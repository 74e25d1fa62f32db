// XlmrForSequenceClassification: the whole model (embeddings, encoder blocks, classification
// head) with explicit Forward and Backward, parameters in one ParameterStore.
//
// Forward keeps, per block, what that block's backward needs (EncoderBlockSaved), or only the
// block's input when the recompute plan says so; Backward then recomputes that block just
// before its backward. Backward walks the blocks last to first and reports each completed
// gradient bucket (head, last block, ..., embeddings), so a synchroniser can start reducing
// it while backward goes on.
#ifndef XLMR_MODELS_XLMR_MODEL_H_
#define XLMR_MODELS_XLMR_MODEL_H_

#include <functional>
#include <memory>
#include <vector>

#include "framework/tensor/parameter_store.h"
#include "framework/tensor/tensor.h"
#include "models/xlmr/classification_head.h"
#include "models/xlmr/config.h"
#include "models/xlmr/embeddings.h"
#include "models/xlmr/encoder_block.h"
#include "models/xlmr/forward_context.h"
#include "models/xlmr/parameter_layout.h"

namespace xlmr::models {

class XlmrForSequenceClassification final : public train::TrainableModel {
 public:
  XlmrForSequenceClassification(XlmrConfig config, Device device);

  const XlmrConfig& config() const { return config_; }
  const ParameterLayout& layout() const { return layout_; }
  ParameterStore& parameters() override { return store_; }
  const ParameterStore& parameters() const { return store_; }
  int num_blocks() const override { return static_cast<int>(config_.num_hidden_layers); }

  // recompute[i] == true: block i keeps only its input in forward and is recomputed before
  // its backward. Empty (the default) keeps everything.
  void SetRecomputePlan(std::vector<bool> recompute) override;

  // Returns logits [B, num_labels] (matmul dtype). Keeps the activations for Backward when
  // `keep_activations`; evaluation passes false and keeps nothing.
  Tensor Forward(const ModelInputs& inputs, const ForwardContext& context,
                 bool keep_activations) override;

  // [in] d_logits [B, num_labels] (any float dtype): the gradient of the (scaled) loss.
  // Accumulates every parameter gradient (+=) and calls on_bucket_ready(bucket) as each
  // bucket's gradients are final for this pass. Frees the saved activations as it goes.
  void Backward(const Tensor& d_logits, const ForwardContext& context,
                const train::BucketReadyFn& on_bucket_ready) override;

  // Drops any saved activations (e.g. when a step is abandoned).
  void ReleaseActivations() override;

 private:
  bool Recomputes(int block) const;

  XlmrConfig config_;
  ParameterLayout layout_;
  ParameterStore store_;
  Embeddings embeddings_;
  std::vector<EncoderBlock> blocks_;
  ClassificationHead head_;
  std::vector<bool> recompute_;

  // Saved between Forward and Backward.
  Tensor key_mask_;
  EmbeddingsSaved embeddings_saved_;
  std::vector<EncoderBlockSaved> blocks_saved_;
  Tensor encoder_output_;
  HeadSaved head_saved_;
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_XLMR_MODEL_H_
