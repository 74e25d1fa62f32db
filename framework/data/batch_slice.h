// Sequences [begin, end) of a collated batch as a batch of their own, in the batch's form:
// padded rows cut to the slice's longest real sequence (sentence-transformers pads each
// mini-batch to its own longest), or packed tokens with rebased cu_seqlens. The cached
// (GradCache) form of in-batch negatives embeds a large batch in such mini-batches
// (framework/train/train_step.h). Labels are not sliced: they belong to the whole batch.
#ifndef XLMR_FRAMEWORK_DATA_BATCH_SLICE_H_
#define XLMR_FRAMEWORK_DATA_BATCH_SLICE_H_

#include <cstdint>

#include "framework/data/collate.h"

namespace xlmr::data {

// [in] batch: padded with right padding (data::Collate) or packed; 0 <= begin < end <= B.
// Returns the slice's input_ids, attention_mask (padded), token_type_ids (when the batch has
// them), cu_seqlens and max_seqlen (packed) and tokens; labels undefined, loss_terms 0.
Batch SliceSequences(const Batch& batch, int64_t begin, int64_t end);

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_BATCH_SLICE_H_
