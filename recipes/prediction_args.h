// The settings a model's predictions depend on, as its training run used them (issue 45):
// prediction_args.json, written by xlmr_finetune into the final model and every checkpoint
// (listed in their manifest.json), and read back by xlmr_predict, and by xlmr_finetune
// --model_dir, as the defaults of the flags the command line does not give. Without it a
// prediction has to repeat the training command's flags, and a forgotten one (question
// answering's --version_2_with_negative, a shorter --max_seq_length) changes the answers
// silently. Format (docs/CONTRACT.md): one JSON object of flag names and the values the run
// used, exactly the keys of the model's task (PredictionArgNames), e.g. for question answering
//
//   {"max_seq_length": 64, "per_device_eval_batch_size": 64, "doc_stride": 32, "n_best_size": 20,
//    "max_answer_length": 64, "version_2_with_negative": true, "null_score_diff_threshold": 0}
//
// A model directory without the file (the hub's, or written before this file existed) keeps
// the flags' own defaults.
#ifndef XLMR_RECIPES_PREDICTION_ARGS_H_
#define XLMR_RECIPES_PREDICTION_ARGS_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "models/encoder/config.h"
#include "nlohmann/json.hpp"
#include "recipes/common_flags.h"

namespace xlmr::recipes {

inline constexpr char kPredictionArgsFileName[] = "prediction_args.json";

// The flags recorded for a model of `task`, in the file's order: max_seq_length and
// per_device_eval_batch_size for every task (the batch size moves roundings: the CPU's matrix
// products block by the batch's rows); text_column and text_pair_column ('' for none) for sequence classification and
// regression; tokens_column for token classification; doc_stride, n_best_size,
// max_answer_length, version_2_with_negative and null_score_diff_threshold for question
// answering. Not recorded: the precision (--fp16, --bf16) and the device, which choose how a
// prediction is computed (what the machine at hand does well), not what it is (up to rounding).
std::vector<std::string> PredictionArgNames(models::Task task);

// The file's text for a model of `task` trained with `text` (the columns and the effective
// max_seq_length), `eval_batch_size` and, for question answering, `qa`.
std::string PredictionArgsText(models::Task task, const TextFlags& text, const QaFlags& qa,
                               int64_t eval_batch_size);

// What a model directory recorded.
struct RecordedPredictionArgs {
  std::string path;       // <model_dir>/prediction_args.json, as messages name it
  nlohmann::json values;  // flag name -> value, exactly PredictionArgNames(task)
};

// `model_dir`'s prediction_args.json for a model whose config.json is `config`; nullopt when
// the directory has none. When the directory has a manifest.json, the file must be listed in it
// with its size and CRC32C. InvalidArgument, one line naming the file and what was expected: a
// file that does not match its manifest, is not a JSON object, lacks a key of the model's task
// or has another, or holds a value of the wrong type or out of range (what the flag itself
// would refuse, and a max_seq_length beyond the model's positions).
absl::StatusOr<std::optional<RecordedPredictionArgs>> ReadPredictionArgs(const std::string& model_dir,
                                                                         const models::EncoderConfig& config);

// What applying recorded values to the flags did.
struct AppliedPredictionArgs {
  std::vector<std::string> applied;  // the recorded flags the command line did not give
  // One line naming each given flag whose value differs from the recorded one, with both
  // values and the file; empty when none differs.
  std::string differences;
};

// Sets every recorded flag that `given` (FlagsGiven) does not name to its recorded value; a
// given flag wins. `program` prefixes the line of differences ("xlmr_predict").
absl::StatusOr<AppliedPredictionArgs> ApplyPredictionArgs(const RecordedPredictionArgs& recorded,
                                                          const std::set<std::string>& given,
                                                          const std::string& program);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_PREDICTION_ARGS_H_
