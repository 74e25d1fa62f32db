// The embedded default run: `bazel run //recipes:xlmr_finetune` with no --model_dir and no
// --train_file fine-tunes a small randomly initialised XLM-R-shaped model on the language-
// identification data shipped in recipes/data/langid. The Hugging Face defaults of the
// optimiser flags (learning rate 2e-5, batch 8, 3 epochs) are meant for pretrained models and
// would not train a random one in minutes, so this run has its own training arguments,
// recipes/data/langid/training_args.json (in the spirit of the per-task defaults of HF's
// example scripts). They apply only to flags not given on the command line.
#ifndef XLMR_RECIPES_EMBEDDED_DEFAULT_H_
#define XLMR_RECIPES_EMBEDDED_DEFAULT_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace xlmr::recipes {

// Names of the flags given ("--name=v", "--name v", "--noname") in `arguments`, the command
// line with its flagfiles expanded (CheckCommandLine's result), read before absl parses it
// (this Abseil has no public "was this flag set" query). A flag set in a flagfile is given:
// the embedded default's presets must not override it.
std::set<std::string> FlagsGiven(const std::vector<std::string>& arguments);

// True when the command line names neither --model_dir nor --train_file.
bool IsEmbeddedDefaultRun(const std::set<std::string>& given);

// Sets every flag of the preset that the command line did not set; returns "name=value" for
// each flag it set (for the log). Errors name the preset file and the key.
absl::StatusOr<std::vector<std::string>> ApplyEmbeddedTrainingArgs(const std::string& preset_path,
                                                                   const std::set<std::string>& given);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_EMBEDDED_DEFAULT_H_
