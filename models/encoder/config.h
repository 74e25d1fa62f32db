// XLM-RoBERTa model configuration: the Hugging Face config.json of a model directory.
//
//   XLMR_ASSIGN_OR_RETURN(EncoderConfig config, LoadEncoderConfig(model_dir + "/config.json"));
//   config.id2label = {"neg", "pos"};
//   XLMR_RETURN_IF_ERROR(SaveEncoderConfig(config, output_dir + "/config.json"));
//
// Values come from the file. A key the file does not have takes the default of HF's
// `XLMRobertaConfig` class, which is NOT the XLM-R checkpoint's value (the class says
// vocab_size 30522, max_position_embeddings 512, type_vocab_size 2, layer_norm_eps 1e-12;
// xlm-roberta-base says 250002, 514, 1, 1e-5): a config.json is always read, never assumed.
//
// What is saved loads back in HF Transformers as the family's class (ArchitectureName); keys
// this code does not know (use_cache, output_past, dtype, ...) are carried through unchanged.
#ifndef XLMR_MODELS_ENCODER_CONFIG_H_
#define XLMR_MODELS_ENCODER_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/families.h"
#include "nlohmann/json.hpp"

namespace xlmr::models {

// How the encoder computes self-attention (HF's attn_implementation, a load-time choice that
// config.json does not store). kFused (framework/ops/fused_attention.h) keeps no [B,N,S,S]
// probabilities; blocks use it wherever the device, dtype and head size have a fused kernel
// (ops::FusedAttentionSupported) and eager attention elsewhere.
enum class AttentionImplementation { kEager, kFused };

// "eager" | "fused"; nullopt for anything else.
std::optional<AttentionImplementation> ParseAttentionImplementation(const std::string& text);

// What the model's head computes, as Hugging Face chooses the class and the loss:
//   kSequenceClassification  XLMRobertaForSequenceClassification, cross-entropy over labels;
//   kRegression              the same class with problem_type "regression" (num_labels 1, MSE);
//   kTokenClassification     XLMRobertaForTokenClassification, a label per token;
//   kQuestionAnswering       XLMRobertaForQuestionAnswering, start and end logits per token
//                            (num_labels 2, labels LABEL_0 and LABEL_1 as HF's default).
//   kSentenceEmbedding       XLMRobertaModel (the backbone alone) under sentence-transformers'
//                            Pooling: one embedding per text (models/encoder/pooling_head.h),
//                            trained with in-batch negatives (framework/train/in_batch_negatives.h).
//   kCrossEncoder            XLMRobertaForSequenceClassification with one output scoring a text
//                            pair, trained with binary cross-entropy on the logit
//                            (sentence-transformers' CrossEncoder with BinaryCrossEntropyLoss);
//                            its head is a regression model's (config.json alone cannot tell them
//                            apart: sentence-transformers' config_sentence_transformers.json does).
enum class Task {
  kSequenceClassification,
  kRegression,
  kTokenClassification,
  kQuestionAnswering,
  kSentenceEmbedding,
  kCrossEncoder
};

// sentence-transformers' Pooling modes this model computes (its 1_Pooling/config.json):
// pooling_mode_mean_tokens or pooling_mode_cls_token.
enum class SentencePooling { kMean, kCls };

// "sequence_classification" | "regression" | "token_classification" | "question_answering" |
// "sentence_embedding"; nullopt otherwise.
std::optional<Task> ParseTask(const std::string& text);
const char* TaskName(Task task);

// The `architectures` entry Hugging Face writes for the task's model class in the family, e.g.
// RobertaForTokenClassification, CamembertForQuestionAnswering.
const char* ArchitectureName(const ModelFamily& family, Task task);

// Every field the model, the classification head and the trainer read. Defaults are HF's
// `XLMRobertaConfig` / `PretrainedConfig` class defaults (used only for absent keys).
struct EncoderConfig {
  int64_t vocab_size = 30522;
  int64_t hidden_size = 768;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t intermediate_size = 3072;
  std::string hidden_act = "gelu";  // only "gelu" (exact erf GELU) is implemented
  double hidden_dropout_prob = 0.1;
  double attention_probs_dropout_prob = 0.1;
  // Dropout before the classification head's dense and out_proj layers; HF falls back to
  // hidden_dropout_prob when this is null/absent.
  std::optional<double> classifier_dropout;
  int64_t max_position_embeddings = 512;
  int64_t type_vocab_size = 2;
  double layer_norm_eps = 1e-12;
  int64_t pad_token_id = 1;
  int64_t bos_token_id = 0;
  int64_t eos_token_id = 2;
  double initializer_range = 0.02;
  // Class names ordered by id: id2label[i] is the name of class i; num_labels is its size.
  // HF's default when neither id2label nor num_labels is given: {"LABEL_0", "LABEL_1"}.
  std::vector<std::string> id2label = {"LABEL_0", "LABEL_1"};
  // null (absent), "regression", "single_label_classification" or
  // "multi_label_classification"; HF infers it from the labels' dtype when null.
  std::optional<std::string> problem_type;
  // From model_type (its row of models/families.h); absent means xlm-roberta (what this
  // trainer has always read). Never null.
  const ModelFamily* family = &XlmRobertaFamily();
  // From architectures[0] (the family's class names) and problem_type:
  // "XLMRobertaForTokenClassification" (a RoBERTa: "RobertaForTokenClassification", a
  // CamemBERT: "CamembertForTokenClassification") is token
  // classification, ...ForQuestionAnswering question answering, the base class (XLMRobertaModel,
  // BertModel, ...: what sentence-transformers saves) sentence embedding; otherwise problem_type
  // "regression", or a null problem_type with one label (HF's inference at loss time), is
  // regression; anything else is sequence classification.
  Task task = Task::kSequenceClassification;
  // kSentenceEmbedding's pooling. Not in config.json: sentence-transformers keeps it in the
  // Pooling module's own config (1_Pooling/config.json).
  SentencePooling pooling = SentencePooling::kMean;
  // kSentenceEmbedding: whether the embeddings are L2-normalised after pooling
  // (sentence-transformers' Normalize module; the trained cosine similarity ignores it).
  bool normalize_embeddings = false;
  // Not read from or written to config.json (see AttentionImplementation).
  AttentionImplementation attention = AttentionImplementation::kFused;
  // The file's full content as read (an empty object for a default-constructed config);
  // saving starts from it so that unknown keys survive.
  nlohmann::json raw = nlohmann::json::object();

  int64_t num_labels() const { return static_cast<int64_t>(id2label.size()); }
  int64_t head_dim() const { return hidden_size / num_attention_heads; }
  // The longest sequence the model takes: RoBERTa's positions start after the pad id, so
  // max_position_embeddings - pad_token_id - 1 (512 for XLM-R); BERT's start at 0, so
  // max_position_embeddings. The fixed stride of every dropout mask index
  // (models/encoder/token_layout.h; docs/DECISIONS.md, "Dropout masks do not depend on padding").
  int64_t max_sequence_length() const {
    return family->positions_from_zero ? max_position_embeddings
                                       : max_position_embeddings - pad_token_id - 1;
  }
  // The inverse of id2label (names are unique, checked at load).
  std::vector<std::pair<std::string, int64_t>> label2id() const;
};

// Reads and validates `path` (a Hugging Face config.json).
// Errors (InvalidArgument / NotFound) name the file and the key, e.g.
//   "model/config.json: hidden_size (768) must be divisible by num_attention_heads (5)".
// Checks: integer/number/string types; sizes and layer_norm_eps positive; dropouts in [0, 1);
// initializer_range >= 0; hidden_act == "gelu"; position_embedding_type == "absolute" and
// model_type a row of models/families.h when present; pad/bos/eos ids inside the vocabulary;
// max_position_embeddings > pad_token_id + 1 (RoBERTa positions start after the pad id);
// id2label keys exactly the integers 0..n-1 with unique names; label2id (when present) the
// inverse of id2label, or the only label map when id2label is absent; num_labels (when present)
// equal to the number of labels; problem_type null or one of HF's three values.
absl::StatusOr<EncoderConfig> LoadEncoderConfig(const std::string& path);

// Validates an already parsed config.json object; `source` names it in error messages.
absl::StatusOr<EncoderConfig> EncoderConfigFromJson(const nlohmann::json& json,
                                              const std::string& source);

// What HF writes for the task's class: `config.raw` with every known field overwritten,
// architectures [ArchitectureName(family, task)], model_type family->model_type,
// position_embedding_type "absolute", id2label with string keys "0".."n-1", label2id,
// problem_type ("regression" for kRegression, null for kTokenClassification, else as read)
// and classifier_dropout (null when unset). num_labels is removed: HF derives it
// from id2label, and a stale copy could contradict it.
nlohmann::json EncoderConfigToJson(const EncoderConfig& config);

// Writes EncoderConfigToJson(config) to `path` (2-space indent, keys sorted, like HF) through
// `path`.tmp and a rename, so a crash never leaves a half-written config.json.
absl::Status SaveEncoderConfig(const EncoderConfig& config, const std::string& path);

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_CONFIG_H_
