// Hugging Face model directories in and out.
//
// In: a directory with config.json and model.safetensors, as `save_pretrained` writes it or as
// the hub ships XLM-R (XLMRobertaForMaskedLM). Tensor names are accepted with or without the
// family's prefix (`roberta.`, `bert.`) and with the pre-2019 LayerNorm names (gamma/beta);
// lm_head.*, cls.* and *.position_ids are ignored, and pooler.* except by BERT's sequence head,
// which loads it when present and initialises it otherwise (HF's behaviour). F32, F16 and BF16 tensors are
// widened to the fp32 masters. A backbone tensor that is missing or has the wrong shape is an
// error naming the file, the tensor and the shapes.
//
// The head is kept when the directory has one for the task and labels asked for
// (from_pretrained's behaviour); otherwise (a backbone-only checkpoint, a head of another task,
// or one trained for other labels) the head is freshly initialised, N(0, initializer_range),
// bias 0.
//
// Out: config.json (the task's class: XLMRobertaForSequenceClassification or
// XLMRobertaForTokenClassification) and model.safetensors with HF's names and
// {"format": "pt"} metadata, loadable by from_pretrained / the Auto classes.
#ifndef XLMR_MODELS_ENCODER_HF_CHECKPOINT_H_
#define XLMR_MODELS_ENCODER_HF_CHECKPOINT_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/encoder/model.h"

namespace xlmr::models {

struct LoadOptions {
  // The class names the run trains for, in id order; nullopt keeps the directory's own.
  // Ignored for regression, whose single output is named as the directory names it (HF's
  // "LABEL_0" when the directory was not a regression model).
  std::optional<std::vector<std::string>> labels;
  // The task the run trains (--task); nullopt keeps the directory's (EncoderConfig::task).
  std::optional<Task> task;
  uint64_t seed = 42;  // for a fresh head
  Device device = Device::kCpu;
  // Overrides hidden, attention and classifier dropout (--dropout), as passing
  // hidden_dropout_prob=... to from_pretrained does; nullopt keeps config.json's.
  std::optional<double> dropout;
  // HF's attn_implementation (not part of config.json).
  AttentionImplementation attention = AttentionImplementation::kFused;
  // A sentence-embedding model's pooling (--pooling, or the directory's 1_Pooling/config.json).
  SentencePooling pooling = SentencePooling::kMean;
  bool normalize_embeddings = false;  // and its Normalize module (EncoderConfig::normalize_embeddings)
};

// Applies a --dropout override to every dropout probability of `config`.
void OverrideDropout(EncoderConfig& config, double dropout);

struct LoadedModel {
  std::unique_ptr<EncoderModel> model;
  bool fresh_head = false;  // true when the head was initialised rather than loaded
};

absl::StatusOr<LoadedModel> LoadPretrained(const std::string& model_dir, const LoadOptions& options);

// Maps a checkpoint tensor name to ours (the canonical HF name with the family's backbone
// prefix, `roberta.` or `bert.`: ModelFamily::backbone_prefix); returns "" for tensors we ignore
// (lm_head, cls, position_ids, and the pooler of a family whose head does not use it, unless
// `keep_pooler`: a model that carries one, ParameterLayout::pooler_parameters).
std::string CanonicalTensorName(const std::string& name, const ModelFamily& family = XlmRobertaFamily(),
                                bool keep_pooler = false);

// The name parameter `name` is saved under: ours, or for a sentence-embedding model the base
// model's (XLMRobertaModel's tensors carry no `roberta.` prefix), which CanonicalTensorName
// maps back.
std::string SavedTensorName(const EncoderConfig& config, const std::string& name);

// Writes config.json and model.safetensors into `output_dir` (created if needed).
absl::Status SavePretrained(const EncoderModel& model, const std::string& output_dir);

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_HF_CHECKPOINT_H_
