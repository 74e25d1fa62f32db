// xlmr_predict for a sentence-embedding model: one embedding per input row, as
// sentence-transformers' encode() gives it (the model's Pooling, then its Normalize module when
// it has one), written row by row into a NumPy .npy matrix [rows, hidden] float32.
#ifndef XLMR_RECIPES_EMBEDDING_PREDICT_H_
#define XLMR_RECIPES_EMBEDDING_PREDICT_H_

#include "absl/status/status.h"
#include "framework/data/tokenized_dataset.h"
#include "framework/train/evaluate.h"
#include "models/encoder/model.h"
#include "recipes/npy_writer.h"

namespace xlmr::recipes {

// Embeds every example of `inputs` in batches of settings.batch_size (padded or packed as the
// settings say) and appends them to `output` in order; `normalize`: L2-normalise each row.
absl::Status WriteEmbeddings(models::EncoderModel& model, const data::TokenizedDataset& inputs,
                             const train::EvalSettings& settings, bool normalize, NpyMatrixWriter& output);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_EMBEDDING_PREDICT_H_
