// What the trainer needs from a model, and what a model needs to know about one pass.
//
// framework/ never includes models/: a model (models/encoder: every family) implements
// TrainableModel, and the trainer works only through it. What a pass reads of a batch
// (ModelInputs, ToModelInputs) is framework/train/model_inputs.h.
#ifndef XLMR_FRAMEWORK_TRAIN_MODEL_INTERFACE_H_
#define XLMR_FRAMEWORK_TRAIN_MODEL_INTERFACE_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "framework/random/philox.h"
#include "framework/recompute/memory_model.h"
#include "framework/recompute/recompute_plan.h"
#include "framework/tensor/dtype.h"
#include "framework/tensor/parameter_store.h"
#include "framework/tensor/tensor.h"
#include "framework/train/model_inputs.h"

namespace xlmr::train {

// One forward/backward pass: precision policy and the coordinates that key dropout masks.
struct PassContext {
  bool training = false;  // dropout on
  // Autocast dtype: kF32 = off; kF16 (--fp16) or kBF16 (--bf16): matrix products in that
  // dtype with fp32 accumulation (the "half dtype"; loss scaling is the trainer's, fp16 only).
  DType autocast = DType::kF32;
  uint64_t seed = 0;
  uint32_t step = 0;        // optimizer step (0-based)
  uint32_t micro_step = 0;  // within the accumulation window
  // CUDA training steps: where the device reads `step` for the dropout masks (DropoutKey::
  // step_on_device; ops::DropoutStepOnDevice), so that a captured step replays each step's own.
  const uint32_t* step_on_device = nullptr;

  // The dtype matrix products consume and produce under this pass's precision policy
  // (PyTorch autocast: linear/matmul in fp16|bf16; layer norm, softmax and losses in fp32).
  DType matmul_dtype() const { return autocast; }

  DropoutKey KeyFor(uint32_t layer, uint32_t op) const {
    return DropoutKey{seed, step, micro_step, layer, op, step_on_device};
  }
};

// Called by Backward each time a gradient bucket of the ParameterStore is final.
using BucketReadyFn = std::function<void(int bucket)>;

class TrainableModel {
 public:
  virtual ~TrainableModel() = default;

  virtual ParameterStore& parameters() = 0;
  // Number of blocks the recompute plan chooses for.
  virtual int num_blocks() const = 0;
  // What each block keeps for its backward (framework/recompute/recompute_plan.h): an empty
  // plan keeps everything, otherwise one entry per block. Every plan computes bit-identical
  // results; only activation memory and time differ.
  virtual void SetRecomputePlan(recompute::RecomputePlan plan) = 0;
  // Measures the activation bytes of one training micro-step of `shape` (padded or packed; a
  // packed shape only where TakesPackedInputs) under `context`
  // (framework/recompute/memory_model.h), for the planner. Leaves no activations behind; may
  // zero the gradients and reset the device's memory peaks (call it before training, not
  // inside a step).
  virtual recompute::PassMemory MeasurePassMemory(const recompute::BatchShape& shape,
                                                  const PassContext& context) = 0;

  // Whether Forward takes packed inputs for passes of autocast dtype `autocast` (its attention
  // has a variable-length form on its device); a model that does not gets padded batches.
  virtual bool TakesPackedInputs(DType autocast) const { return false; }

  // Returns logits in the matmul dtype: [B, num_labels] for a task with one prediction per
  // sequence (classification, regression), [B, S, num_labels] for one per token (token
  // classification; [T, num_labels] for packed inputs); keeps activations for Backward when
  // keep_activations.
  virtual Tensor Forward(const ModelInputs& inputs, const PassContext& context,
                         bool keep_activations) = 0;
  // Accumulates (+=) parameter gradients for d_logits (shaped as the logits) and reports each
  // finished bucket, in the store's bucket order (0, 1, 2, ...).
  virtual void Backward(const Tensor& d_logits, const PassContext& context,
                        const BucketReadyFn& on_bucket_ready) = 0;
  virtual void ReleaseActivations() = 0;
};

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_MODEL_INTERFACE_H_
