#include "framework/train/run_results.h"

#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/io/file_manifest.h"

namespace xlmr::train {

nlohmann::ordered_json EvalRecord(const EvalResult& result, const std::string& prefix) {
  nlohmann::ordered_json record;
  record[prefix + "_loss"] = result.loss;
  for (const auto& [name, value] : result.metrics) record[prefix + "_" + name] = value;
  record[prefix + "_examples"] = result.examples;
  return record;
}

nlohmann::ordered_json RunResults(const TrainingState& state, const FinalModel& final_model, bool stopped_early,
                                  bool load_best_model_at_end, const std::optional<EvalResult>& eval,
                                  const std::optional<EvalResult>& test) {
  // "step": the final model's; "global_step": where the run ended (the rerun rules read both).
  nlohmann::ordered_json results = {{"step", final_model.step}, {"epoch", final_model.epoch},
                                    {"global_step", state.global_step}, {"stopped_early", stopped_early}};
  if (load_best_model_at_end && !state.best_model_checkpoint.empty()) {
    results["best_model_checkpoint"] = state.best_model_checkpoint;
    results["best_metric"] = *state.best_metric;
  }
  if (eval.has_value()) results.update(EvalRecord(*eval, "eval"));
  if (test.has_value()) results.update(EvalRecord(*test, "test"));
  return results;
}

nlohmann::ordered_json SummaryRecord(const TrainingState& state, double train_seconds, int64_t final_step,
                                     bool stopped_early, int64_t early_stopping_patience,
                                     const nlohmann::ordered_json& results) {
  nlohmann::ordered_json summary = {{"type", "summary"},
                                    {"steps", state.global_step},
                                    {"skipped_steps", state.skipped_steps},
                                    {"train_seconds", train_seconds}};
  if (stopped_early) {
    summary["stopped"] = absl::StrCat("early stopping: ", state.early_stopping_patience_counter,
                                      state.early_stopping_patience_counter == 1 ? " evaluation" : " evaluations",
                                      " without improvement (--early_stopping_patience=", early_stopping_patience,
                                      ")");
  }
  if (final_step != state.global_step) summary["model_step"] = final_step;
  for (auto& [key, value] : results.items()) {
    if (key != "step" && key != "epoch" && key != "global_step" && key != "stopped_early") summary[key] = value;
  }
  return summary;
}

absl::Status WriteFinalFiles(const std::string& dir, std::vector<std::string> model_files,
                             const std::optional<EvalResult>& eval, const std::optional<EvalResult>& test,
                             const TrainingState& state, const nlohmann::ordered_json& results) {
  std::vector<std::string> files = std::move(model_files);
  // The final evaluations' own files (question answering's predictions), before the two below.
  for (const std::optional<EvalResult>* final_eval : {&eval, &test}) {
    if (!final_eval->has_value() || (*final_eval)->write_files == nullptr) continue;
    XLMR_ASSIGN_OR_RETURN(const std::vector<std::string> written, (*final_eval)->write_files(dir));
    files.insert(files.end(), written.begin(), written.end());
  }
  // Flushed to disk with the others by WriteManifest. eval_results.json comes last: the rerun
  // rules read it as the mark of a finished run (recipes/output_dir_policy.h).
  for (const auto& [name, json] : {std::pair<const char*, nlohmann::ordered_json>{"trainer_state.json", TrainerStateJson(state)},
                                   {"eval_results.json", results}}) {
    std::ofstream out(dir + "/" + name);
    out << json.dump(2) << "\n";
    out.close();
    if (!out) return absl::DataLossError(absl::StrCat(dir, "/", name, ": write failed"));
    files.push_back(name);
  }
  // The final model's files are checksummed and flushed to disk, then the manifest and the
  // directory, as a checkpoint's are (xlmr_predict and --model_dir verify them).
  return io::WriteManifest(dir, files);
}

}  // namespace xlmr::train
