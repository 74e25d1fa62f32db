#include "models/model_tokenizer.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "models/bert/bert_tokenizer.h"
#include "models/roberta/roberta_tokenizer.h"
#include "models/xlmr/tokenizer.h"

namespace xlmr::models {
namespace {

constexpr char kSentencePieceFile[] = "sentencepiece.bpe.model";
constexpr char kVocabFile[] = "vocab.json";
constexpr char kMergesFile[] = "merges.txt";
constexpr char kTokenizerConfigFile[] = "tokenizer_config.json";
constexpr char kWordPieceVocabFile[] = "vocab.txt";

// NotFound naming the first required file `directory` lacks.
absl::Status ExpectRequiredFiles(const std::string& directory, ModelFamily family) {
  for (const std::string& name : RequiredTokenizerFiles(family)) {
    const std::string path = directory + "/" + name;
    if (!std::filesystem::is_regular_file(path)) {
      return absl::NotFoundError(absl::StrCat(path, ": missing; a ", ModelTypeName(family),
                                              " model directory needs its tokenizer file ", name));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TextTokenizer>> LoadRoberta(const std::string& directory, const XlmrConfig& config) {
  XLMR_ASSIGN_OR_RETURN(roberta::RobertaTokenizer tokenizer, roberta::RobertaTokenizer::Load(directory));
  if (tokenizer.id_limit() > config.vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat(directory, "/", kVocabFile, ": has ids up to ",
                                                   tokenizer.id_limit() - 1, ", config.json's vocab_size is ",
                                                   config.vocab_size));
  }
  return std::unique_ptr<TextTokenizer>(std::make_unique<roberta::RobertaTokenizer>(std::move(tokenizer)));
}

absl::StatusOr<std::unique_ptr<TextTokenizer>> LoadBert(const std::string& directory, const XlmrConfig& config) {
  XLMR_ASSIGN_OR_RETURN(BertTokenizer tokenizer, BertTokenizer::Load(directory));
  if (tokenizer.vocab_size() > config.vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat(directory, "/", kWordPieceVocabFile, ": has ",
                                                   tokenizer.vocab_size(), " entries, config.json's vocab_size is ",
                                                   config.vocab_size));
  }
  return std::unique_ptr<TextTokenizer>(std::make_unique<BertTokenizer>(std::move(tokenizer)));
}

// XLM-R and CamemBERT: the same SentencePiece file, each with its family's id mapping.
absl::StatusOr<std::unique_ptr<TextTokenizer>> LoadSentencePiece(const std::string& directory,
                                                                 const XlmrConfig& config) {
  const SentencePieceIdMapping& mapping = config.family == ModelFamily::kCamembert
                                              ? SentencePieceIdMapping::Camembert()
                                              : SentencePieceIdMapping::XlmRoberta();
  XLMR_ASSIGN_OR_RETURN(XlmrTokenizer tokenizer,
                        XlmrTokenizer::Load(directory + "/" + kSentencePieceFile, config.vocab_size, mapping));
  return std::unique_ptr<TextTokenizer>(std::make_unique<XlmrTokenizer>(std::move(tokenizer)));
}

}  // namespace

std::vector<std::string> RequiredTokenizerFiles(ModelFamily family) {
  if (family == ModelFamily::kRoberta) return {kVocabFile, kMergesFile};
  if (family == ModelFamily::kBert) return {kWordPieceVocabFile};
  return {kSentencePieceFile};
}

std::vector<std::string> OptionalTokenizerFiles(ModelFamily family) {
  if (family == ModelFamily::kRoberta || family == ModelFamily::kBert) return {kTokenizerConfigFile};
  return {};
}

absl::StatusOr<ModelTokenizer> LoadModelTokenizer(const std::string& directory, const XlmrConfig& config) {
  XLMR_RETURN_IF_ERROR(ExpectRequiredFiles(directory, config.family));
  ModelTokenizer loaded;
  if (config.family == ModelFamily::kRoberta) {
    XLMR_ASSIGN_OR_RETURN(loaded.tokenizer, LoadRoberta(directory, config));
  } else if (config.family == ModelFamily::kBert) {
    XLMR_ASSIGN_OR_RETURN(loaded.tokenizer, LoadBert(directory, config));
  } else {
    XLMR_ASSIGN_OR_RETURN(loaded.tokenizer, LoadSentencePiece(directory, config));
  }
  if (loaded.tokenizer->pad_id() != config.pad_token_id) {
    return absl::InvalidArgumentError(absl::StrCat(
        directory, "/config.json: pad_token_id is ", config.pad_token_id, ", the tokenizer's <pad> is ",
        loaded.tokenizer->pad_id()));
  }
  loaded.files = RequiredTokenizerFiles(config.family);
  if (config.family == ModelFamily::kCamembert) loaded.cache_tag = ModelTypeName(config.family);
  for (const std::string& name : OptionalTokenizerFiles(config.family)) {
    if (std::filesystem::is_regular_file(directory + "/" + name)) loaded.files.push_back(name);
  }
  return loaded;
}

}  // namespace xlmr::models
