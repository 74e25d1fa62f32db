// xlmr_finetune's flags of --task=sentence_embedding (docs/CONTRACT.md): the loss (in-batch
// negatives over (anchor, positive, hard negatives...) rows, or CoSENT over scored pairs), which
// columns of the data make a row (sentence-transformers reads them by position), the Pooling
// mode, and the loss's scale.
#ifndef XLMR_RECIPES_EMBEDDING_FLAGS_H_
#define XLMR_RECIPES_EMBEDDING_FLAGS_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/train/objective.h"
#include "models/encoder/config.h"

namespace xlmr::recipes {

// --embedding_loss: sentence-transformers' loss the run trains with.
enum class EmbeddingLoss {
  kMultipleNegativesRanking,  // rows of (anchor, positive, hard negatives...): in-batch negatives
  kMultipleNegativesSymmetricRanking,  // the same, each positive also scored against the anchors
  kCosent,                    // rows of (sentence1, sentence2) with a score: CoSENTLoss
};

struct EmbeddingSettings {
  EmbeddingLoss loss = EmbeddingLoss::kMultipleNegativesRanking;
  // --embedding_columns: the anchor's, the positive's, then any hard negatives' columns; for
  // kCosent the pair's two columns (default sentence1,sentence2, as sentence-transformers' stsb).
  std::vector<std::string> columns = {"anchor", "positive"};
  models::SentencePooling pooling = models::SentencePooling::kMean;  // --pooling
  // A Normalize module after the pooling: kept from --model_dir's modules.json (no flag).
  bool normalize = false;
  double similarity_scale = 20.0;                                     // --similarity_scale
  // --mini_batch_size: texts per mini-batch of the cached loss (GradCache); 0: uncached.
  int64_t mini_batch_size = 0;
  // --gather_across_devices: under mpirun, every rank's texts are the candidates of every anchor.
  bool gather_across_devices = false;
};

// The flags above, validated: a known loss; at least two distinct non-empty column names (exactly
// two for kCosent; its default columns when --embedding_columns is not in `given`); pooling
// "mean" or "cls"; a positive finite scale; a mini-batch size >= 0 (0 for kCosent: there is no
// cached CoSENT). Errors name the flag (exit status 2).
absl::StatusOr<EmbeddingSettings> ReadEmbeddingFlags(const std::set<std::string>& given);

// The training objective of `loss` (framework/train/objective.h).
train::Objective EmbeddingObjective(EmbeddingLoss loss);

// sentence-transformers' name of a pooling mode ("mean", "cls").
const char* PoolingModeName(models::SentencePooling pooling);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_EMBEDDING_FLAGS_H_
