// Random initialisation as HF's XLMRobertaPreTrainedModel._init_weights does it:
// Linear and Embedding weights ~ N(0, initializer_range), biases 0, LayerNorm weight 1 and
// bias 0, and the padding rows of the word and position embeddings zeroed.
//
// The normal samples come from Philox (Box-Muller), keyed by (seed, parameter index), so an
// initialisation is identical on every machine and every rank for the same seed (std::
// distributions are implementation-defined).
#ifndef XLMR_MODELS_ENCODER_INIT_H_
#define XLMR_MODELS_ENCODER_INIT_H_

#include <cstdint>

#include "models/encoder/model.h"

namespace xlmr::models {

// Initialises every parameter.
void InitializeAllWeights(EncoderModel& model, uint64_t seed);

// Initialises the classification head only (a fresh head on a pretrained backbone).
void InitializeHead(EncoderModel& model, uint64_t seed);

// Initialises BERT's pooler (ParameterLayout::pooler_parameters): a checkpoint without one, e.g.
// a saved BertForTokenClassification, loaded for sequence classification (HF initialises it the
// same way and says it is newly initialised). Nothing for other families.
void InitializePooler(EncoderModel& model, uint64_t seed);

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_INIT_H_
