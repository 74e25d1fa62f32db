// What one forward/backward pass of a model needs to know besides its inputs.
#ifndef XLMR_MODELS_XLMR_FORWARD_CONTEXT_H_
#define XLMR_MODELS_XLMR_FORWARD_CONTEXT_H_

#include <cstdint>

#include "framework/random/philox.h"
#include "framework/tensor/dtype.h"

namespace xlmr::models {

struct ForwardContext {
  bool training = false;  // dropout on
  bool fp16 = false;      // autocast: matrix products in fp16 with fp32 accumulation
  uint64_t seed = 0;      // with step and micro_step, keys every dropout mask
  uint32_t step = 0;
  uint32_t micro_step = 0;

  // The dtype matrix products consume and produce under this context's precision policy
  // (PyTorch autocast: linear/matmul in fp16; layer norm, softmax and losses in fp32).
  DType matmul_dtype() const { return fp16 ? DType::kF16 : DType::kF32; }

  DropoutKey KeyFor(uint32_t layer, uint32_t op) const {
    return DropoutKey{seed, step, micro_step, layer, op};
  }
};

// Which dropout inside a layer a DropoutKey's `op` field names.
enum DropoutSite : uint32_t {
  kEmbeddingDropout = 0,
  kAttentionProbsDropout = 1,
  kAttentionOutputDropout = 2,
  kFeedForwardOutputDropout = 3,
  kHeadInputDropout = 4,
  kHeadHiddenDropout = 5,
};

}  // namespace xlmr::models

#endif  // XLMR_MODELS_XLMR_FORWARD_CONTEXT_H_
