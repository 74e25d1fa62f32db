// The files that make a saved sentence-embedding model a sentence-transformers model, beside
// the Hugging Face base model (config.json with architectures [XLMRobertaModel], ...) and its
// tokenizer files: modules.json (a Transformer module at the directory itself, then a Pooling
// module in 1_Pooling/, then a Normalize module when the model normalises its embeddings),
// sentence_bert_config.json, 1_Pooling/config.json and config_sentence_transformers.json. Written in the long-standing layout every
// sentence-transformers release reads (module types under sentence_transformers.models, the
// pooling_mode_* booleans), so that SentenceTransformer(directory) loads it with no missing
// module and encodes as this model does.
#ifndef XLMR_RECIPES_SENTENCE_TRANSFORMERS_FILES_H_
#define XLMR_RECIPES_SENTENCE_TRANSFORMERS_FILES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/encoder/config.h"

namespace xlmr::recipes {

// What a sentence-transformers directory's modules.json says this model computes after the
// Transformer module.
struct SentenceTransformersModules {
  models::SentencePooling pooling = models::SentencePooling::kMean;
  bool normalize = false;  // a Normalize module follows the Pooling one
};

// Reads `directory`/modules.json and its Pooling module's config.json (the long-standing keys,
// pooling_mode_mean_tokens / pooling_mode_cls_token, or the newer pooling_mode). No
// modules.json: what sentence-transformers makes of a plain Hugging Face directory (mean
// pooling, no Normalize). Errors (one line naming the file, exit status 2 for the callers): a
// module other than Transformer, Pooling and Normalize (e.g. Dense), a pooling mode other than
// mean and cls, JSON that is not as described.
absl::StatusOr<SentenceTransformersModules> ReadSentenceTransformersModules(const std::string& directory);

// Writes the files above into `directory` (which exists; 1_Pooling/ is created), each durably;
// returns their names relative to `directory`, for its manifest. `max_seq_length`: the
// Transformer module's truncation (--max_seq_length, as training tokenized).
absl::StatusOr<std::vector<std::string>> WriteSentenceTransformersFiles(const std::string& directory,
                                                                        const models::EncoderConfig& config,
                                                                        int max_seq_length);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_SENTENCE_TRANSFORMERS_FILES_H_
