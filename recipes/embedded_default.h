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

// Names of the flags given on the command line ("--name=v", "--name v", "--noname"), read from
// argv before absl parses it (this Abseil has no public "was this flag set" query). Flags from
// a --flagfile are not seen.
std::set<std::string> FlagsOnCommandLine(int argc, char** argv);

// True when the command line names neither --model_dir nor --train_file.
bool IsEmbeddedDefaultRun(const std::set<std::string>& given);

// Sets every flag of the preset that the command line did not set; returns "name=value" for
// each flag it set (for the log). Errors name the preset file and the key.
absl::StatusOr<std::vector<std::string>> ApplyEmbeddedTrainingArgs(const std::string& preset_path,
                                                                   const std::set<std::string>& given);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_EMBEDDED_DEFAULT_H_
