#include "recipes/finetune_data.h"

#include <algorithm>
#include <optional>

#include "framework/core/fingerprint.h"
#include "framework/core/status_macros.h"
#include "framework/data/tagged_sentence_reader.h"
#include "framework/data/token_cache.h"
#include "framework/data/word_labels.h"
#include "recipes/qa_file.h"
#include "recipes/tokenize_fn.h"

namespace xlmr::recipes {
namespace {

absl::StatusOr<data::TokenizedDataset> Tokenize(const std::string& path, const FinetuneConfig& config,
                                                const models::TextTokenizer& tokenizer,
                                                const std::string& fingerprint) {
  data::TokenCacheSpec spec;
  spec.data_path = path;
  spec.columns = config.columns;
  spec.require_label = true;
  spec.tokenizer_fingerprint = fingerprint;
  spec.max_length = config.max_seq_length;
  return data::LoadOrBuildTokenCache(spec, config.cache_dir, MakeTokenizeFn(tokenizer, config.max_seq_length));
}

// A token-classification file, tokenized in memory (word_labels.h). `sentences` receives
// what the reader read (the training file's tags make the label map).
absl::StatusOr<data::TokenizedDataset> TokenizeTagged(const std::string& path, const FinetuneConfig& config,
                                                      const models::TextTokenizer& tokenizer,
                                                      std::vector<data::TaggedSentence>* sentences) {
  XLMR_ASSIGN_OR_RETURN(*sentences, data::ReadTaggedSentences(path, config.tagged_columns, /*require_tags=*/true));
  return data::TokenizedDataset::FromColumns(
      path, data::TokenizeTaggedSentences(*sentences, MakeTokenizeWordsFn(tokenizer, config.max_seq_length)));
}

absl::StatusOr<FinetuneData> LoadTokenClassificationData(const FinetuneConfig& config,
                                                         const models::TextTokenizer& tokenizer) {
  std::vector<data::TaggedSentence> sentences;
  XLMR_ASSIGN_OR_RETURN(data::TokenizedDataset train, TokenizeTagged(config.train_file, config, tokenizer, &sentences));
  XLMR_ASSIGN_OR_RETURN(data::LabelMap labels, data::TagLabelMap(sentences, config.train_file));
  XLMR_RETURN_IF_ERROR(train.AssignTokenLabelIds(labels));
  FinetuneData result{std::move(labels), std::move(train), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  for (auto [path, slot] : {std::pair{&config.eval_file, &result.eval}, std::pair{&config.test_file, &result.test}}) {
    if (path->empty()) continue;
    XLMR_ASSIGN_OR_RETURN(data::TokenizedDataset dataset, TokenizeTagged(*path, config, tokenizer, &sentences));
    XLMR_RETURN_IF_ERROR(dataset.AssignTokenLabelIds(result.labels));
    *slot = std::move(dataset);
  }
  return result;
}

// A training, evaluation or test file of question answering (qa_file.h): answers required.
absl::StatusOr<QaFile> ReadQaDataFile(const std::string& path, const FinetuneConfig& config,
                                      const models::TextTokenizer& tokenizer) {
  QaFileOptions options;
  options.answers = data::QaAnswers::kRequired;
  options.version_2_with_negative = config.qa_postprocess.version_2_with_negative;
  options.features = config.qa_features;
  return ReadQaFile(path, options, tokenizer);
}

absl::StatusOr<FinetuneData> LoadQuestionAnsweringData(const FinetuneConfig& config,
                                                       const models::TextTokenizer& tokenizer) {
  XLMR_ASSIGN_OR_RETURN(QaFile train, ReadQaDataFile(config.train_file, config, tokenizer));
  XLMR_ASSIGN_OR_RETURN(data::LabelMap labels, data::LabelMap::FromId2Label({"LABEL_0", "LABEL_1"}, config.train_file));
  FinetuneData result{std::move(labels), std::move(train.dataset), std::nullopt, std::nullopt, std::nullopt,
                      std::nullopt};
  if (!config.eval_file.empty()) {
    XLMR_ASSIGN_OR_RETURN(QaFile eval, ReadQaDataFile(config.eval_file, config, tokenizer));
    result.eval = std::move(eval.dataset);
    result.qa_eval = QaSplit{std::move(eval.examples), std::move(eval.windows)};
  }
  if (!config.test_file.empty()) {
    XLMR_ASSIGN_OR_RETURN(QaFile test, ReadQaDataFile(config.test_file, config, tokenizer));
    result.test = std::move(test.dataset);
    result.qa_test = QaSplit{std::move(test.examples), std::move(test.windows)};
  }
  return result;
}

// The token cache's key for the tokenizer: its one untagged file's fingerprint (XLM-R's, as the
// caches written before RoBERTa have it), or that of the tag and every file's fingerprint in
// order.
absl::StatusOr<std::string> TokenizerFingerprint(const std::vector<std::string>& paths, const std::string& tag) {
  if (paths.size() == 1 && tag.empty()) {
    XLMR_ASSIGN_OR_RETURN(const uint64_t hash, FingerprintFile(paths[0]));
    return FingerprintHex(hash);
  }
  Fingerprint combined;
  if (!tag.empty()) combined.AddString(tag);  // untagged: RoBERTa's keys as before
  for (const std::string& path : paths) {
    XLMR_ASSIGN_OR_RETURN(const uint64_t hash, FingerprintFile(path));
    combined.AddInt(static_cast<int64_t>(hash));
  }
  return FingerprintHex(combined.Value());
}

// A file of rows of several texts (--embedding_columns), each column tokenized on its own
// through the token cache, then stored column by column (data::RowLayout). With
// --embedding_loss=cosent every row has a score (--label_column): each of the row's texts gets it
// as its label, and the dataset its numbers (AssignRegressionTargets: finite, or an error naming
// the line); otherwise rows have no labels.
absl::StatusOr<data::TokenizedDataset> TokenizeColumns(const std::string& path, const FinetuneConfig& config,
                                                       const models::TextTokenizer& tokenizer,
                                                       const std::string& fingerprint) {
  const bool scored = config.embedding.loss == EmbeddingLoss::kCosent;
  data::TokenizedColumns joined;
  std::vector<int32_t> row_labels;  // the first column's label indices, one per row
  for (const std::string& column : config.embedding.columns) {
    data::TokenCacheSpec spec;
    spec.data_path = path;
    spec.columns.text_column = column;
    spec.columns.label_column = config.columns.label_column;
    spec.columns.text_flag = "--embedding_columns";
    spec.require_label = scored;
    spec.tokenizer_fingerprint = fingerprint;
    spec.max_length = config.max_seq_length;
    XLMR_ASSIGN_OR_RETURN(const data::TokenizedDataset texts,
                          data::LoadOrBuildTokenCache(spec, config.cache_dir,
                                                      MakeTokenizeFn(tokenizer, config.max_seq_length)));
    if (scored && row_labels.empty()) {
      joined.label_names = texts.label_names();
      for (int64_t i = 0; i < texts.size(); ++i) {
        const std::optional<std::string> name = texts.label_name(i);
        const auto it = std::lower_bound(joined.label_names.begin(), joined.label_names.end(), name.value_or(""));
        row_labels.push_back(name ? static_cast<int32_t>(it - joined.label_names.begin()) : -1);
      }
    }
    for (int64_t i = 0; i < texts.size(); ++i) {
      const absl::Span<const int32_t> ids = texts.example(i);
      joined.token_ids.insert(joined.token_ids.end(), ids.begin(), ids.end());
      joined.offsets.push_back(static_cast<int64_t>(joined.token_ids.size()));
      joined.lines.push_back(texts.line(i));
      joined.label_index.push_back(scored ? row_labels[i] : -1);
    }
  }
  data::TokenizedDataset dataset = data::TokenizedDataset::FromColumns(path, std::move(joined));
  if (scored) XLMR_RETURN_IF_ERROR(dataset.AssignRegressionTargets());
  return dataset;
}

absl::StatusOr<FinetuneData> LoadSentenceEmbeddingData(const FinetuneConfig& config,
                                                       const models::TextTokenizer& tokenizer,
                                                       const std::string& fingerprint) {
  XLMR_ASSIGN_OR_RETURN(data::TokenizedDataset train, TokenizeColumns(config.train_file, config, tokenizer, fingerprint));
  // The base model's outputs are not classes; it keeps HF's two default labels.
  XLMR_ASSIGN_OR_RETURN(data::LabelMap labels, data::LabelMap::FromId2Label({"LABEL_0", "LABEL_1"}, config.train_file));
  FinetuneData result{std::move(labels), std::move(train), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  for (auto [path, slot] : {std::pair{&config.eval_file, &result.eval}, std::pair{&config.test_file, &result.test}}) {
    if (path->empty()) continue;
    XLMR_ASSIGN_OR_RETURN(*slot, TokenizeColumns(*path, config, tokenizer, fingerprint));
  }
  return result;
}

// Sequence-level labels of `dataset`: class ids, or numbers for regression.
absl::Status AssignLabels(data::TokenizedDataset& dataset, const FinetuneConfig& config,
                          const data::LabelMap& labels) {
  if (config.task == models::Task::kRegression) return dataset.AssignRegressionTargets();
  if (config.task == models::Task::kCrossEncoder) {  // binary cross-entropy's targets
    XLMR_RETURN_IF_ERROR(dataset.AssignRegressionTargets());
    for (int64_t i = 0; i < dataset.size(); ++i) {
      if (!(dataset.target(i) >= 0.0f && dataset.target(i) <= 1.0f)) {
        return absl::InvalidArgumentError(absl::StrCat(dataset.file(), ":", dataset.line(i), ": label ",
                                                       dataset.target(i),
                                                       " is not in [0, 1] (--task=cross_encoder: a relevance "
                                                       "probability, 1 relevant, 0 not)"));
      }
    }
    return absl::OkStatus();
  }
  return dataset.AssignLabelIds(labels);
}

}  // namespace

absl::StatusOr<FinetuneData> LoadFinetuneData(const FinetuneConfig& config,
                                              const models::TextTokenizer& tokenizer,
                                              const std::vector<std::string>& tokenizer_paths,
                                              const std::string& tokenizer_cache_tag) {
  if (config.task == models::Task::kTokenClassification) {
    return LoadTokenClassificationData(config, tokenizer);
  }
  if (config.task == models::Task::kQuestionAnswering) {
    return LoadQuestionAnsweringData(config, tokenizer);
  }
  XLMR_ASSIGN_OR_RETURN(const std::string fingerprint, TokenizerFingerprint(tokenizer_paths, tokenizer_cache_tag));
  if (config.task == models::Task::kSentenceEmbedding) return LoadSentenceEmbeddingData(config, tokenizer, fingerprint);
  XLMR_ASSIGN_OR_RETURN(data::TokenizedDataset train, Tokenize(config.train_file, config, tokenizer, fingerprint));
  // Regression and a cross-encoder have one output, named as Hugging Face names an unnamed one.
  XLMR_ASSIGN_OR_RETURN(data::LabelMap labels,
                        config.task == models::Task::kRegression || config.task == models::Task::kCrossEncoder
                            ? data::LabelMap::FromId2Label({"LABEL_0"}, config.train_file)
                            : data::LabelMap::FromTrainingLabels(train.label_names(), config.train_file));
  XLMR_RETURN_IF_ERROR(AssignLabels(train, config, labels));
  FinetuneData result{std::move(labels), std::move(train), std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  for (auto [path, slot] : {std::pair{&config.eval_file, &result.eval}, std::pair{&config.test_file, &result.test}}) {
    if (path->empty()) continue;
    XLMR_ASSIGN_OR_RETURN(data::TokenizedDataset dataset, Tokenize(*path, config, tokenizer, fingerprint));
    XLMR_RETURN_IF_ERROR(AssignLabels(dataset, config, result.labels));
    *slot = std::move(dataset);
  }
  return result;
}

}  // namespace xlmr::recipes
