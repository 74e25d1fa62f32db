#include "recipes/embedding_flags.h"

#include <cmath>
#include <set>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "framework/core/status_macros.h"
#include "recipes/common_flags.h"

ABSL_FLAG(std::string, embedding_loss, "multiple_negatives_ranking",
          "sentence_embedding: multiple_negatives_ranking (rows of anchor, positive, hard negatives; "
          "sentence-transformers' MultipleNegativesRankingLoss) | multiple_negatives_symmetric_ranking (the "
          "same rows, each positive also scored against the anchors: directions query_to_doc and "
          "doc_to_query, per_direction) | cosent (pairs with a similarity score in --label_column, default "
          "score; CoSENTLoss)");
ABSL_FLAG(std::string, embedding_columns, "anchor,positive",
          "sentence_embedding: the columns of a row, in order: anchor, positive, then any hard negatives "
          "(sentence-transformers' MultipleNegativesRankingLoss); with --embedding_loss=cosent the pair's two "
          "columns (default sentence1,sentence2)");
ABSL_FLAG(std::string, pooling, "mean", "sentence_embedding: mean | cls (sentence-transformers' Pooling)");
ABSL_FLAG(double, similarity_scale, 20.0,
          "sentence_embedding: the cosine similarities' scale in the loss (1 / temperature)");
ABSL_FLAG(int64_t, mini_batch_size, 0,
          "sentence_embedding: > 0 trains with the cached loss (GradCache, sentence-transformers' "
          "CachedMultipleNegativesRankingLoss): each column's texts are embedded this many at a time, so "
          "activation memory is one mini-batch's whatever the batch size; 0: the whole batch at once");

ABSL_FLAG(bool, gather_across_devices, false,
          "sentence_embedding, in-batch negatives under mpirun: every anchor's candidates are the texts of "
          "every rank's micro-batch, gradients flowing to them (sentence-transformers' gather_across_devices)");

namespace xlmr::recipes {

absl::StatusOr<EmbeddingSettings> ReadEmbeddingFlags(const std::set<std::string>& given) {
  EmbeddingSettings settings;
  const std::string loss = absl::GetFlag(FLAGS_embedding_loss);
  XLMR_RETURN_IF_ERROR(ExpectFlag(
      loss == "multiple_negatives_ranking" || loss == "multiple_negatives_symmetric_ranking" || loss == "cosent",
      "embedding_loss", "multiple_negatives_ranking, multiple_negatives_symmetric_ranking or cosent", loss));
  const bool cosent = loss == "cosent";
  if (cosent) settings.loss = EmbeddingLoss::kCosent;
  if (loss == "multiple_negatives_symmetric_ranking") settings.loss = EmbeddingLoss::kMultipleNegativesSymmetricRanking;
  const std::string columns = cosent && given.count("embedding_columns") == 0
                                  ? std::string("sentence1,sentence2")
                                  : absl::GetFlag(FLAGS_embedding_columns);
  settings.columns = absl::StrSplit(columns, ',');
  std::set<std::string> distinct(settings.columns.begin(), settings.columns.end());
  const bool distinct_names = distinct.size() == settings.columns.size() && distinct.count("") == 0;
  XLMR_RETURN_IF_ERROR(cosent ? ExpectFlag(settings.columns.size() == 2 && distinct_names, "embedding_columns",
                                           "two distinct column names separated by a comma (the pair's "
                                           "texts) with --embedding_loss=cosent",
                                           columns)
                              : ExpectFlag(settings.columns.size() >= 2 && distinct_names, "embedding_columns",
                                           "two or more distinct column names separated by commas (anchor, "
                                           "positive, hard negatives...)",
                                           columns));
  const std::string pooling = absl::GetFlag(FLAGS_pooling);
  XLMR_RETURN_IF_ERROR(ExpectFlag(pooling == "mean" || pooling == "cls", "pooling", "mean or cls", pooling));
  settings.pooling = pooling == "cls" ? models::SentencePooling::kCls : models::SentencePooling::kMean;
  settings.similarity_scale = absl::GetFlag(FLAGS_similarity_scale);
  XLMR_RETURN_IF_ERROR(ExpectFlag(std::isfinite(settings.similarity_scale) && settings.similarity_scale > 0,
                                  "similarity_scale", "a positive number",
                                  absl::StrCat(settings.similarity_scale)));
  settings.mini_batch_size = absl::GetFlag(FLAGS_mini_batch_size);
  XLMR_RETURN_IF_ERROR(ExpectFlag(settings.mini_batch_size >= 0, "mini_batch_size",
                                  "0 (uncached) or a positive number of texts", absl::StrCat(settings.mini_batch_size)));
  XLMR_RETURN_IF_ERROR(ExpectFlag(settings.mini_batch_size == 0 || !cosent, "mini_batch_size",
                                  "0 with --embedding_loss=cosent (the cached loss is in-batch negatives')",
                                  absl::StrCat(settings.mini_batch_size)));
  settings.gather_across_devices = absl::GetFlag(FLAGS_gather_across_devices);
  XLMR_RETURN_IF_ERROR(ExpectFlag(!settings.gather_across_devices || !cosent, "gather_across_devices",
                                  "false with --embedding_loss=cosent (its pairs have no candidates)", "true"));
  XLMR_RETURN_IF_ERROR(ExpectFlag(!settings.gather_across_devices || settings.mini_batch_size == 0,
                                  "gather_across_devices", "false with --mini_batch_size (not supported yet)",
                                  "true"));
  return settings;
}

train::Objective EmbeddingObjective(EmbeddingLoss loss) {
  switch (loss) {
    case EmbeddingLoss::kMultipleNegativesRanking: return train::Objective::kInBatchNegatives;
    case EmbeddingLoss::kMultipleNegativesSymmetricRanking: return train::Objective::kSymmetricInBatchNegatives;
    case EmbeddingLoss::kCosent: return train::Objective::kScoredPairs;
  }
  return train::Objective::kInBatchNegatives;
}

const char* PoolingModeName(models::SentencePooling pooling) {
  return pooling == models::SentencePooling::kCls ? "cls" : "mean";
}

}  // namespace xlmr::recipes
