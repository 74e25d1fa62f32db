// A tiny XLM-R classifier and data set for the data-parallel tests: small enough that a
// training step takes milliseconds, shaped like the real thing (2 blocks, so 4 gradient
// buckets: head, block 1, block 0, embeddings).
#ifndef XLMR_TESTS_FRAMEWORK_DISTRIBUTED_TINY_TRAINING_H_
#define XLMR_TESTS_FRAMEWORK_DISTRIBUTED_TINY_TRAINING_H_

#include <cstdint>
#include <vector>

#include "framework/data/collate.h"
#include "framework/data/tokenized_dataset.h"
#include "models/xlmr/model.h"

namespace xlmr::testing {

// Hidden size 16, 2 layers, 2 heads, vocabulary 40, labels {a, b, c}, no dropout.
models::XlmrConfig TinyConfig();

// `n` examples of varied lengths (3..10 tokens) and labels, with label ids assigned.
data::TokenizedDataset TinyDataset(int n);

// Examples [first, first + count) of `dataset` as one padded batch (pad id 1).
data::Batch TinyBatch(const data::TokenizedDataset& dataset, int64_t first, int64_t count);

}  // namespace xlmr::testing

#endif  // XLMR_TESTS_FRAMEWORK_DISTRIBUTED_TINY_TRAINING_H_
