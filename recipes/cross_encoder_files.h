// What makes a saved cross-encoder (--task=cross_encoder) a sentence-transformers CrossEncoder,
// and how a directory is recognised as one.
//
// The model itself is a Hugging Face sequence classifier with one output, which
// CrossEncoder(directory) loads as it is (a Transformer module, sigmoid on the logit: the default
// activation for one label) in every release since 4.0, with no warning. Beside it goes
// config_sentence_transformers.json with model_type "CrossEncoder" and the Sigmoid activation, as
// sentence-transformers writes it; no modules.json, whose module types differ between releases
// (a plain directory loads the same everywhere). config.json alone cannot tell a cross-encoder from
// a regression model (the same class with one output): that file does, for xlmr_predict and
// xlmr_finetune --model_dir.
#ifndef XLMR_RECIPES_CROSS_ENCODER_FILES_H_
#define XLMR_RECIPES_CROSS_ENCODER_FILES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "models/encoder/config.h"

namespace xlmr::recipes {

// Writes config_sentence_transformers.json into `directory` (which exists), durably; returns the
// names written, for its manifest.
absl::StatusOr<std::vector<std::string>> WriteCrossEncoderFiles(const std::string& directory);

// `config_task` (config.json's, models::LoadEncoderConfig), or kCrossEncoder when it is
// kRegression and `directory` holds a config_sentence_transformers.json whose model_type is
// "CrossEncoder" (an unreadable file is not one).
models::Task TaskOfModelDirectory(const std::string& directory, models::Task config_task);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_CROSS_ENCODER_FILES_H_
