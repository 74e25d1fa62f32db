// The XLM-R model's view of a pass: the framework's PassContext plus the names of its
// dropout sites (the `op` field of every DropoutKey it makes).
#ifndef XLMR_MODELS_XLMR_FORWARD_CONTEXT_H_
#define XLMR_MODELS_XLMR_FORWARD_CONTEXT_H_

#include <cstdint>

#include "framework/train/model_interface.h"

namespace xlmr::models {

// The pass context and inputs are the framework's (the trainer builds them).
using ForwardContext = train::PassContext;
using train::ModelInputs;

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
