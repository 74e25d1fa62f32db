// The tokenizer of a Hugging Face model directory, chosen by its config.json's model_type
// (EncoderConfig::family):
//
//   XLMR_ASSIGN_OR_RETURN(EncoderConfig config, LoadEncoderConfig(dir + "/config.json"));
//   XLMR_ASSIGN_OR_RETURN(ModelTokenizer t, LoadModelTokenizer(dir, config));
//   Encoding e = t.tokenizer->Encode("a text", std::nullopt, 128);
//
// The files each family reads are its row of models/families.h.
#ifndef XLMR_MODELS_MODEL_TOKENIZER_H_
#define XLMR_MODELS_MODEL_TOKENIZER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/tokenizers/text_tokenizer.h"
#include "models/encoder/config.h"

namespace xlmr::models {

struct ModelTokenizer {
  std::unique_ptr<TextTokenizer> tokenizer;
  // The names of the tokenizer files the directory has and the tokenizer read: what a saved
  // model directory copies beside its weights, and what the token cache's fingerprint covers.
  std::vector<std::string> files;
  // ModelFamily::cache_tag of the directory's family (models/families.h).
  std::string cache_tag;
};

// Loads `directory`'s tokenizer for `config.family`. Errors (one line, naming the file): a
// required file missing (NotFound), a file the tokenizer refuses (its Load's errors), an id
// the embedding table cannot hold (>= config.vocab_size), or a <pad> id other than
// config.pad_token_id (the batcher pads and the positions count with the config's id).
absl::StatusOr<ModelTokenizer> LoadModelTokenizer(const std::string& directory, const EncoderConfig& config);

}  // namespace xlmr::models

#endif  // XLMR_MODELS_MODEL_TOKENIZER_H_
