#include "models/families.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "models/tokenizers/byte_level_bpe/roberta_tokenizer.h"
#include "models/tokenizers/sentencepiece/sentencepiece_tokenizer.h"
#include "models/tokenizers/wordpiece/bert_tokenizer.h"

namespace xlmr::models {
namespace {

constexpr char kSentencePieceFile[] = "sentencepiece.bpe.model";
constexpr char kVocabJsonFile[] = "vocab.json";
constexpr char kMergesFile[] = "merges.txt";
constexpr char kTokenizerConfigFile[] = "tokenizer_config.json";
constexpr char kVocabTxtFile[] = "vocab.txt";

template <typename Tokenizer>
std::unique_ptr<TextTokenizer> Boxed(Tokenizer tokenizer) {
  return std::make_unique<Tokenizer>(std::move(tokenizer));
}

absl::StatusOr<std::unique_ptr<TextTokenizer>> LoadSentencePiece(
    const std::string& directory, int64_t vocab_size, const SentencePieceIdMapping& mapping) {
  XLMR_ASSIGN_OR_RETURN(SentencePieceTokenizer tokenizer,
                        SentencePieceTokenizer::Load(absl::StrCat(directory, "/", kSentencePieceFile),
                                                     vocab_size, mapping));
  return Boxed(std::move(tokenizer));
}

absl::StatusOr<std::unique_ptr<TextTokenizer>> LoadXlmRoberta(const std::string& directory,
                                                              int64_t vocab_size) {
  return LoadSentencePiece(directory, vocab_size, SentencePieceIdMapping::XlmRoberta());
}

absl::StatusOr<std::unique_ptr<TextTokenizer>> LoadCamembert(const std::string& directory,
                                                             int64_t vocab_size) {
  return LoadSentencePiece(directory, vocab_size, SentencePieceIdMapping::Camembert());
}

absl::StatusOr<std::unique_ptr<TextTokenizer>> LoadRoberta(const std::string& directory,
                                                           int64_t vocab_size) {
  XLMR_ASSIGN_OR_RETURN(roberta::RobertaTokenizer tokenizer, roberta::RobertaTokenizer::Load(directory));
  if (tokenizer.id_limit() > vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat(directory, "/", kVocabJsonFile, ": has ids up to ",
                                                   tokenizer.id_limit() - 1, ", config.json's vocab_size is ",
                                                   vocab_size));
  }
  return Boxed(std::move(tokenizer));
}

absl::StatusOr<std::unique_ptr<TextTokenizer>> LoadBert(const std::string& directory, int64_t vocab_size) {
  XLMR_ASSIGN_OR_RETURN(BertTokenizer tokenizer, BertTokenizer::Load(directory));
  if (tokenizer.vocab_size() > vocab_size) {
    return absl::InvalidArgumentError(absl::StrCat(directory, "/", kVocabTxtFile, ": has ",
                                                   tokenizer.vocab_size(), " entries, config.json's vocab_size is ",
                                                   vocab_size));
  }
  return Boxed(std::move(tokenizer));
}

const std::vector<ModelFamily>& Table() {
  static const std::vector<ModelFamily>* const table = new std::vector<ModelFamily>{
      {"xlm-roberta",
       {"XLMRobertaForSequenceClassification", "XLMRobertaForTokenClassification",
        "XLMRobertaForQuestionAnswering", "XLMRobertaModel"},
       "roberta", /*positions_from_zero=*/false, /*pooler=*/false,
       {kSentencePieceFile}, {}, LoadXlmRoberta, /*cache_tag=*/""},
      {"roberta",
       {"RobertaForSequenceClassification", "RobertaForTokenClassification",
        "RobertaForQuestionAnswering", "RobertaModel"},
       "roberta", /*positions_from_zero=*/false, /*pooler=*/false,
       {kVocabJsonFile, kMergesFile}, {kTokenizerConfigFile}, LoadRoberta, /*cache_tag=*/""},
      {"bert",
       {"BertForSequenceClassification", "BertForTokenClassification", "BertForQuestionAnswering",
        "BertModel"},
       "bert", /*positions_from_zero=*/true, /*pooler=*/true,
       {kVocabTxtFile}, {kTokenizerConfigFile}, LoadBert, /*cache_tag=*/""},
      {"camembert",
       {"CamembertForSequenceClassification", "CamembertForTokenClassification",
        "CamembertForQuestionAnswering", "CamembertModel"},
       "roberta", /*positions_from_zero=*/false, /*pooler=*/false,
       {kSentencePieceFile}, {}, LoadCamembert, /*cache_tag=*/"camembert"},
  };
  return *table;
}

}  // namespace

absl::Span<const ModelFamily> ModelFamilies() { return Table(); }

const ModelFamily* FindModelFamily(absl::string_view model_type) {
  for (const ModelFamily& family : Table()) {
    if (model_type == family.model_type) return &family;
  }
  return nullptr;
}

const ModelFamily& XlmRobertaFamily() { return Table().front(); }

}  // namespace xlmr::models
