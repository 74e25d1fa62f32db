// The tokenizer of a Hugging Face model directory, chosen by its config.json's model_type
// (XlmrConfig::family):
//
//   XLMR_ASSIGN_OR_RETURN(XlmrConfig config, LoadXlmrConfig(dir + "/config.json"));
//   XLMR_ASSIGN_OR_RETURN(ModelTokenizer t, LoadModelTokenizer(dir, config));
//   Encoding e = t.tokenizer->Encode("a text", std::nullopt, 128);
//
//   xlm-roberta  sentencepiece.bpe.model                        XlmrTokenizer, XLM-R's ids
//   roberta      vocab.json, merges.txt (+ tokenizer_config.json) roberta::RobertaTokenizer
//   bert         vocab.txt (+ tokenizer_config.json)              BertTokenizer
//   camembert    sentencepiece.bpe.model                        XlmrTokenizer, CamemBERT's ids
//                (SentencePieceIdMapping in models/xlmr/tokenizer.h)
#ifndef XLMR_MODELS_MODEL_TOKENIZER_H_
#define XLMR_MODELS_MODEL_TOKENIZER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/text_tokenizer.h"
#include "models/xlmr/config.h"

namespace xlmr::models {

// The family's tokenizer files a model directory must have.
std::vector<std::string> RequiredTokenizerFiles(ModelFamily family);
// The family's tokenizer files a directory may have (read when present, defaults otherwise).
std::vector<std::string> OptionalTokenizerFiles(ModelFamily family);

struct ModelTokenizer {
  std::unique_ptr<TextTokenizer> tokenizer;
  // The names of the tokenizer files the directory has and the tokenizer read: what a saved
  // model directory copies beside its weights, and what the token cache's fingerprint covers.
  std::vector<std::string> files;
  // What decides the ids besides those files' bytes, for the token cache's key: empty where
  // the files alone do (xlm-roberta, roberta: caches written before CamemBERT still hit);
  // "camembert" for CamemBERT, which reads XLM-R's sentencepiece.bpe.model with other ids, so
  // that the same file under the two model_types never shares a cache.
  std::string cache_tag;
};

// Loads `directory`'s tokenizer for `config.family`. Errors (one line, naming the file): a
// required file missing (NotFound), a file the tokenizer refuses (its Load's errors), an id
// the embedding table cannot hold (>= config.vocab_size), or a <pad> id other than
// config.pad_token_id (the batcher pads and the positions count with the config's id).
absl::StatusOr<ModelTokenizer> LoadModelTokenizer(const std::string& directory, const XlmrConfig& config);

}  // namespace xlmr::models

#endif  // XLMR_MODELS_MODEL_TOKENIZER_H_
