// xlmr_finetune's flags of --task=sentence_embedding (docs/CONTRACT.md): which columns of the
// data make a row (sentence-transformers reads them by position: anchor, positive, then hard
// negatives), the Pooling mode, and MultipleNegativesRankingLoss's scale.
#ifndef XLMR_RECIPES_EMBEDDING_FLAGS_H_
#define XLMR_RECIPES_EMBEDDING_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/encoder/config.h"

namespace xlmr::recipes {

struct EmbeddingSettings {
  // --embedding_columns: the anchor's, the positive's, then any hard negatives' columns.
  std::vector<std::string> columns = {"anchor", "positive"};
  models::SentencePooling pooling = models::SentencePooling::kMean;  // --pooling
  // A Normalize module after the pooling: kept from --model_dir's modules.json (no flag).
  bool normalize = false;
  double similarity_scale = 20.0;                                     // --similarity_scale
  // --mini_batch_size: texts per mini-batch of the cached loss (GradCache); 0: uncached.
  int64_t mini_batch_size = 0;
};

// The flags above, validated: at least two distinct non-empty column names, pooling "mean" or
// "cls", a positive finite scale, a mini-batch size >= 0. Errors name the flag (exit status 2).
absl::StatusOr<EmbeddingSettings> ReadEmbeddingFlags();

// sentence-transformers' name of a pooling mode ("mean", "cls").
const char* PoolingModeName(models::SentencePooling pooling);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_EMBEDDING_FLAGS_H_
