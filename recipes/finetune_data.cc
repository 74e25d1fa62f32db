#include "recipes/finetune_data.h"

#include "framework/core/fingerprint.h"
#include "framework/core/status_macros.h"
#include "framework/data/token_cache.h"
#include "recipes/tokenize_fn.h"

namespace xlmr::recipes {
namespace {

absl::StatusOr<data::TokenizedDataset> Tokenize(const std::string& path, const FinetuneConfig& config,
                                                const models::XlmrTokenizer& tokenizer,
                                                const std::string& fingerprint) {
  data::TokenCacheSpec spec;
  spec.data_path = path;
  spec.columns = config.columns;
  spec.require_label = true;
  spec.tokenizer_fingerprint = fingerprint;
  spec.max_length = config.max_seq_length;
  return data::LoadOrBuildTokenCache(spec, config.cache_dir, MakeTokenizeFn(tokenizer, config.max_seq_length));
}

}  // namespace

absl::StatusOr<FinetuneData> LoadFinetuneData(const FinetuneConfig& config,
                                              const models::XlmrTokenizer& tokenizer,
                                              const std::string& tokenizer_path) {
  XLMR_ASSIGN_OR_RETURN(const uint64_t tokenizer_hash, FingerprintFile(tokenizer_path));
  const std::string fingerprint = FingerprintHex(tokenizer_hash);
  XLMR_ASSIGN_OR_RETURN(data::TokenizedDataset train, Tokenize(config.train_file, config, tokenizer, fingerprint));
  XLMR_ASSIGN_OR_RETURN(data::LabelMap labels,
                        data::LabelMap::FromTrainingLabels(train.label_names(), config.train_file));
  XLMR_RETURN_IF_ERROR(train.AssignLabelIds(labels));
  FinetuneData result{std::move(labels), std::move(train), std::nullopt, std::nullopt};
  for (auto [path, slot] : {std::pair{&config.eval_file, &result.eval}, std::pair{&config.test_file, &result.test}}) {
    if (path->empty()) continue;
    XLMR_ASSIGN_OR_RETURN(data::TokenizedDataset dataset, Tokenize(*path, config, tokenizer, fingerprint));
    XLMR_RETURN_IF_ERROR(dataset.AssignLabelIds(result.labels));
    *slot = std::move(dataset);
  }
  return result;
}

}  // namespace xlmr::recipes
