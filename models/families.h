// The model families this trainer runs, one row per Hugging Face `model_type`: everything that
// differs between them outside the tokenizers' own code. The encoder (models/encoder/) is the
// same network for every family and reads only the row's architecture fields; the tokenizer is
// the row's loader (models/model_tokenizer.h calls it).
//
//   model_type   backbone  positions                     pooler  tokenizer files (+ optional)
//   xlm-roberta  roberta.  pad_id + 1 + index (fairseq)  no      sentencepiece.bpe.model
//   roberta      roberta.  pad_id + 1 + index (fairseq)  no      vocab.json, merges.txt (+ tokenizer_config.json)
//   bert         bert.     index, from 0                 yes     vocab.txt (+ tokenizer_config.json)
//   camembert    roberta.  pad_id + 1 + index (fairseq)  no      sentencepiece.bpe.model, CamemBERT's ids
//
// HF's XLMRobertaModel and CamembertModel are RobertaModel: same weights, same names.
// Adding a family: a row in families.cc (its class names, architecture and tokenizer), and code
// only where its network or tokenizer differs from a row already here.
#ifndef XLMR_MODELS_FAMILIES_H_
#define XLMR_MODELS_FAMILIES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "models/tokenizers/text_tokenizer.h"

namespace xlmr::models {

// The class names Hugging Face writes in config.json's `architectures`, by head (regression is
// the sequence classifier with problem_type "regression").
struct TaskClassNames {
  const char* sequence_classification;  // e.g. XLMRobertaForSequenceClassification
  const char* token_classification;     // e.g. RobertaForTokenClassification
  const char* question_answering;       // e.g. CamembertForQuestionAnswering
  const char* base_model;               // the backbone alone, e.g. XLMRobertaModel (what
                                        // sentence-transformers' Transformer module saves)
};

// Loads the family's tokenizer from a model directory whose required files exist. Errors name the
// file: one the tokenizer refuses, or ids the embedding table (vocab_size rows) cannot hold.
using TokenizerLoader = absl::StatusOr<std::unique_ptr<TextTokenizer>> (*)(
    const std::string& directory, int64_t vocab_size);

struct ModelFamily {
  const char* model_type;  // config.json's model_type
  TaskClassNames class_names;
  // The backbone's tensor names start with this and a dot ("roberta", "bert").
  const char* backbone_prefix;
  // RoBERTa numbers positions after the padding id and skips padding (position pad_id for a
  // padding token, whose embedding row gets no gradient); BERT numbers them 0, 1, ... for every
  // token, padding included, and every row of its table learns.
  bool positions_from_zero;
  // BERT's sequence head: the pooler (bert.pooler.dense, tanh) on the first token, then dropout
  // and one Linear `classifier`; the pooler belongs to the backbone (loaded from a pretrained
  // checkpoint that has one, freshly initialised otherwise, as HF does). RoBERTa's head instead
  // drops out the first token before its dense layer (classifier.dense, classifier.out_proj).
  bool pooler;
  // The tokenizer files a model directory must have, and those it may have (read when present,
  // defaults otherwise); a saved model copies those it has.
  std::vector<std::string> required_tokenizer_files;
  std::vector<std::string> optional_tokenizer_files;
  TokenizerLoader load_tokenizer;
  // What decides the ids besides the tokenizer files' bytes, for the token cache's key: empty
  // where the files alone do (caches written before CamemBERT still hit); "camembert" for
  // CamemBERT, which reads XLM-R's sentencepiece.bpe.model with other ids.
  const char* cache_tag;
};

// Every family, in the order messages list them: xlm-roberta, roberta, bert, camembert.
absl::Span<const ModelFamily> ModelFamilies();

// The row whose model_type is `model_type`; nullptr when none is.
const ModelFamily* FindModelFamily(absl::string_view model_type);

// xlm-roberta: the family of a config.json without model_type (what this trainer always read).
const ModelFamily& XlmRobertaFamily();

}  // namespace xlmr::models

#endif  // XLMR_MODELS_FAMILIES_H_
