// What the XLM-R model reads about a pass: the framework's PassContext (precision policy and
// dropout coordinates, the same object for Forward, Backward and recompute) and ModelInputs,
// plus the names of the model's dropout sites (the `op` field of every DropoutKey it makes).
#ifndef XLMR_MODELS_ENCODER_PASS_CONTEXT_H_
#define XLMR_MODELS_ENCODER_PASS_CONTEXT_H_

#include <cstdint>

#include "framework/train/model_interface.h"

namespace xlmr::models {

// The pass context and inputs are the framework's (the trainer builds them).
using train::PassContext;
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

#endif  // XLMR_MODELS_ENCODER_PASS_CONTEXT_H_
