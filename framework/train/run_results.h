// What a finished run reports, built from its state once the loop is over: the metrics line of
// an evaluation, eval_results.json's figures, metrics.jsonl's summary line, and the files that
// complete the final model's directory (docs/CONTRACT.md: "Output directory of xlmr_finetune",
// "metrics.jsonl"). The Trainer (trainer.cc) decides when; these functions say what is written.
#ifndef XLMR_FRAMEWORK_TRAIN_RUN_RESULTS_H_
#define XLMR_FRAMEWORK_TRAIN_RUN_RESULTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "framework/train/evaluate.h"
#include "framework/train/training_checkpoint.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {

// The metrics line of an evaluation: {"type": "eval", "step", "eval_loss", ...} with `prefix`
// ("eval" or "test") on every figure.
nlohmann::ordered_json EvalRecord(const EvalResult& result, const std::string& prefix);

// The weights a finished run leaves as its model: the last step's, or under
// --load_best_model_at_end the best checkpoint's.
struct FinalModel {
  int64_t step = 0;
  double epoch = 0;
};

// eval_results.json: {"step", "epoch"} of the final model, {"global_step"} where the run ended
// and {"stopped_early"} (the rerun rules read them), then, under --load_best_model_at_end with a
// best checkpoint, {"best_model_checkpoint", "best_metric"}, then the figures of `eval` and
// `test` (EvalRecord) where they exist.
nlohmann::ordered_json RunResults(const TrainingState& state, const FinalModel& final_model, bool stopped_early,
                                  bool load_best_model_at_end, const std::optional<EvalResult>& eval,
                                  const std::optional<EvalResult>& test);

// metrics.jsonl's last line: {"type": "summary", "steps", "skipped_steps", "train_seconds"}, a
// "stopped" reason when early stopping ended the run (`early_stopping_patience`: the flag),
// "model_step" when the final model is not the last step's, then every entry of `results`
// (RunResults) but the step, epoch and stop fields.
nlohmann::ordered_json SummaryRecord(const TrainingState& state, double train_seconds, int64_t final_step,
                                     bool stopped_early, int64_t early_stopping_patience,
                                     const nlohmann::ordered_json& results);

// Rank 0, once the final model's files `model_files` (SaveModelFn's) are in `dir`: writes the
// final evaluations' own files (EvalResult::write_files of `eval`, then `test`: question
// answering's predictions), trainer_state.json of `state` and eval_results.json (`results`),
// last, since the rerun rules read it as the mark of a finished run
// (recipes/output_dir_policy.h); then manifest.json over all of them (io::WriteManifest:
// checksummed and flushed to disk, then the manifest and the directory, as a checkpoint's).
absl::Status WriteFinalFiles(const std::string& dir, std::vector<std::string> model_files,
                             const std::optional<EvalResult>& eval, const std::optional<EvalResult>& test,
                             const TrainingState& state, const nlohmann::ordered_json& results);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_RUN_RESULTS_H_
