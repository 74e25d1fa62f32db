#include "recipes/output_dir_policy.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "framework/core/status_macros.h"
#include "framework/distributed/rank_agreement.h"
#include "framework/io/file_manifest.h"
#include "framework/train/metrics_writer.h"
#include "framework/train/tensorboard_writer.h"
#include "framework/train/training_checkpoint.h"
#include "nlohmann/json.hpp"
#include "models/families.h"
#include "recipes/prediction_args.h"
#include "recipes/test_predictions.h"
#include "recipes/runfiles.h"

namespace xlmr::recipes {
namespace fs = std::filesystem;
namespace {

bool IsNumber(absl::string_view text) {
  int64_t ignored = 0;
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
         absl::SimpleAtoi(text, &ignored);
}

// Where the run whose final model output_dir holds ended, or a step of -1 when it holds none
// (eval_results.json is written last, after model.safetensors): its "global_step" (the
// final model may be an earlier, best checkpoint's: "step"), and whether early stopping ended it.
struct FinalModel {
  int64_t run_step = -1;
  bool stopped_early = false;
};
FinalModel ReadFinalModel(const std::string& output_dir) {
  std::ifstream in(output_dir + "/eval_results.json");
  const nlohmann::json results = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  FinalModel final_model;
  if (!results.is_object()) return final_model;
  // Runs written before "global_step" existed: the final model was always the last step's.
  const char* key = results.contains("global_step") ? "global_step" : "step";
  if (!results.contains(key) || !results[key].is_number_integer()) return final_model;
  final_model.run_step = results[key].get<int64_t>();
  final_model.stopped_early = results.value("stopped_early", false) == true;
  return final_model;
}

// The last valid checkpoint (kResume), or kWriteInPlace when there is none.
OutputDirPlan FindResumePoint(const std::string& output_dir) {
  OutputDirPlan plan;
  train::ResumePoint point = train::FindLastValidCheckpoint(output_dir);
  plan.lines = std::move(point.lines);
  if (point.directory.empty()) return plan;
  plan.action = OutputDirAction::kResume;
  plan.checkpoint = point.directory;
  plan.checkpoint_step = point.step;
  const FinalModel final_model = ReadFinalModel(output_dir);
  plan.finished = final_model.run_step == point.step;
  plan.stopped_early = plan.finished && final_model.stopped_early;
  return plan;
}

// Whether `entry` is the default --logging_dir holding the run's TensorBoard event file only.
bool HoldsOnlyTheEventFile(const fs::directory_entry& entry) {
  std::error_code error;
  if (!entry.is_directory(error)) return false;
  for (const fs::directory_entry& inner : fs::directory_iterator(entry.path(), error)) {
    if (inner.path().filename() != train::TensorBoardWriter::kFileName || !inner.is_regular_file(error)) return false;
  }
  return !error;
}

// Whether output_dir holds nothing but what a run writes before its first checkpoint: its
// metrics.jsonl (progress records only) and the temporary directories of a save in progress.
// Names those entries in `found`.
bool HoldsARunBeforeItsFirstCheckpoint(const std::string& output_dir, std::vector<std::string>& found) {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(output_dir, error)) {
    const std::string name = entry.path().filename().string();
    const bool ours = name == "metrics.jsonl"          ? entry.is_regular_file() &&
                                                               train::HoldsOnlyProgressRecords(entry.path().string())
                      : name == train::kDefaultLoggingDirName ? HoldsOnlyTheEventFile(entry)
                                                        : entry.is_directory() && train::IsTemporaryCheckpointName(name);
    if (!ours) return false;
    found.push_back(name);
  }
  std::sort(found.begin(), found.end());
  return !error && !found.empty();
}

// True when `inner` is `outer` or lies inside it (both existing paths).
bool Contains(const fs::path& outer, const fs::path& inner) {
  std::error_code error;
  const fs::path a = fs::weakly_canonical(outer, error);
  const fs::path b = fs::weakly_canonical(inner, error);
  if (error) return false;
  auto [end_a, unused] = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return end_a == a.end();
}

// Whether the old run in `dir` may be deleted once the new one replaces it.
absl::Status CheckReplaceable(const OutputDirRequest& request, const fs::path& dir) {
  const std::string flags = absl::StrCat("--overwrite_output_dir: --output_dir=", request.output_dir);
  std::error_code error;
  if (fs::is_symlink(fs::symlink_status(dir, error))) {
    return absl::InvalidArgumentError(absl::StrCat(flags, " is a symbolic link; give the directory it points to"));
  }
  if (!request.working_directory.empty() && Contains(dir, request.working_directory)) {
    return absl::InvalidArgumentError(absl::StrCat(flags, " contains the working directory, which replacing "
                                                   "it would delete; choose another --output_dir"));
  }
  struct stat own {}, parent {};
  if (stat(dir.c_str(), &own) == 0 && stat(dir.parent_path().c_str(), &parent) == 0 && own.st_dev != parent.st_dev) {
    return absl::InvalidArgumentError(absl::StrCat(flags, " is a mount point, which cannot be replaced by "
                                                   "renaming; choose a directory inside it"));
  }
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (!IsRunOutput(name)) {
      return absl::InvalidArgumentError(absl::StrCat(flags, ": ", entry.path().string(), " was not written by "
                                                     "xlmr_finetune and would be deleted with the old run; move "
                                                     "it away or choose another --output_dir"));
    }
  }
  if (error) return absl::InvalidArgumentError(absl::StrCat(flags, ": ", error.message()));
  return absl::OkStatus();
}

nlohmann::json PlanToJson(const OutputDirPlan& plan) {
  return {{"action", static_cast<int>(plan.action)}, {"checkpoint", plan.checkpoint},
          {"checkpoint_step", plan.checkpoint_step}, {"finished", plan.finished},
          {"stopped_early", plan.stopped_early},
          {"lines", plan.lines},                     {"staging_dir", plan.staging_dir}};
}

OutputDirPlan PlanFromJson(const nlohmann::json& j) {
  OutputDirPlan plan;
  plan.action = static_cast<OutputDirAction>(j.at("action").get<int>());
  plan.checkpoint = j.at("checkpoint").get<std::string>();
  plan.checkpoint_step = j.at("checkpoint_step").get<int64_t>();
  plan.finished = j.at("finished").get<bool>();
  plan.stopped_early = j.at("stopped_early").get<bool>();
  plan.lines = j.at("lines").get<std::vector<std::string>>();
  plan.staging_dir = j.at("staging_dir").get<std::string>();
  return plan;
}

}  // namespace

bool IsRunOutput(const std::string& entry_name) {
  for (const char* file : {"config.json", "model.safetensors", "metrics.jsonl",
                           "eval_results.json", "trainer_state.json", train::kDefaultLoggingDirName,
                           io::kManifestFileName}) {
    if (entry_name == file) return true;
  }
  for (const models::ModelFamily& family : models::ModelFamilies()) {
    for (const auto& files : {family.required_tokenizer_files, family.optional_tokenizer_files}) {
      if (std::find(files.begin(), files.end(), entry_name) != files.end()) return true;
    }
  }
  // The recorded prediction settings, the test data's row predictions, question answering's prediction files (the final
  // evaluations'), and the temporary name a kill can leave while one is written
  // (io::WriteFileDurably).
  for (const char* file : {kPredictionArgsFileName, kTestPredictionsFileName}) {
    if (entry_name == file || entry_name == absl::StrCat(file, ".tmp")) return true;
  }
  for (const char* prefix : {"eval_", "predict_"}) {
    for (const char* file : {"predictions.json", "nbest_predictions.json", "null_odds.json"}) {
      const std::string name = absl::StrCat(prefix, file);
      if (entry_name == name || entry_name == name + ".tmp") return true;
    }
  }
  absl::string_view rest = entry_name;
  if (!absl::ConsumePrefix(&rest, "checkpoint-")) return false;
  const std::vector<absl::string_view> parts = absl::StrSplit(rest, absl::MaxSplits(".tmp-", 1));
  return IsNumber(parts[0]) && (parts.size() == 1 || IsNumber(parts[1]));
}

absl::StatusOr<OutputDirPlan> DecideOutputDir(const OutputDirRequest& request) {
  OutputDirPlan plan;
  if (request.writes_nothing) return plan;
  if (request.resume_from_checkpoint_given && !request.overwrite_output_dir) return plan;
  std::error_code error;
  const fs::path dir = request.output_dir;
  const fs::file_status status = fs::status(dir, error);
  if (!fs::exists(status)) return plan;  // (also when a parent is missing: the trainer creates them)
  if (!fs::is_directory(status)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--output_dir=", request.output_dir, ": exists and is not a directory"));
  }
  if (fs::is_empty(dir, error) && !error) return plan;
  if (request.overwrite_output_dir) {
    XLMR_RETURN_IF_ERROR(CheckReplaceable(request, dir));
    fs::path absolute = fs::absolute(dir).lexically_normal();
    if (!absolute.has_filename()) absolute = absolute.parent_path();  // "out/" -> "out"
    plan.action = OutputDirAction::kReplace;
    plan.staging_dir = absolute.string() + ".overwriting";
    return plan;
  }
  plan = FindResumePoint(request.output_dir);
  if (plan.action == OutputDirAction::kResume) return plan;
  std::vector<std::string> found;
  const bool no_checkpoint = train::ListCheckpoints(request.output_dir).empty();
  if (no_checkpoint && HoldsARunBeforeItsFirstCheckpoint(request.output_dir, found)) {
    plan.lines.push_back(absl::StrCat("--output_dir=", request.output_dir, " holds only what a run writes before its "
                                      "first checkpoint (", absl::StrJoin(found, ", "), "): that run never reached a "
                                      "checkpoint; starting it again from scratch"));
    return plan;
  }
  // Checkpoints that all failed: the newest one's reason (it is the first passed over).
  return absl::InvalidArgumentError(absl::StrCat(
      "--output_dir=", request.output_dir, " is not empty and holds no valid checkpoint-<step> to resume from",
      plan.lines.empty() ? "" : absl::StrCat(" (", plan.lines.front(), ")"),
      ": pass --overwrite_output_dir to replace it, or --resume_from_checkpoint=PATH to continue from a "
      "checkpoint elsewhere"));
}

absl::StatusOr<OutputDirPlan> AgreeOnOutputDir(distributed::Communicator& comm, const OutputDirRequest& request) {
  XLMR_ASSIGN_OR_RETURN(const std::string shared,
                        distributed::ShareRankZeroDecision(comm, [&]() -> absl::StatusOr<std::string> {
                          XLMR_ASSIGN_OR_RETURN(const OutputDirPlan plan, DecideOutputDir(request));
                          return PlanToJson(plan).dump();
                        }));
  return PlanFromJson(nlohmann::json::parse(shared));
}

OutputDirRequest OutputDirRequestFor(const FinetuneConfig& config) {
  OutputDirRequest request;
  request.output_dir = config.trainer.output_dir;
  request.overwrite_output_dir = config.overwrite_output_dir;
  request.resume_from_checkpoint_given = config.resume;
  request.writes_nothing = config.print_memory_plan;
  request.working_directory = UserPath(".");
  return request;
}

void ApplyOutputDirPlan(const OutputDirPlan& plan, FinetuneConfig& config) {
  if (plan.action == OutputDirAction::kResume) {
    config.resume = true;
    config.resume_from_checkpoint = plan.checkpoint;
  }
  if (plan.action == OutputDirAction::kReplace) config.trainer.staging_dir = plan.staging_dir;
}

OutputDirStart DescribeStart(const OutputDirPlan& plan, const std::string& output_dir, int64_t total_steps) {
  OutputDirStart start;
  start.lines = plan.lines;
  if (plan.action == OutputDirAction::kResume && plan.finished &&
      (plan.checkpoint_step >= total_steps || plan.stopped_early)) {
    start.nothing_left_to_do = true;
    start.lines.push_back(absl::StrCat("Checkpoint detected: ", output_dir, " holds the finished run (",
                                       plan.checkpoint, ", step ", plan.checkpoint_step, " of ", total_steps,
                                       plan.stopped_early ? ", stopped early" : "",
                                       "): nothing left to do. To train again from scratch, pass "
                                       "--overwrite_output_dir."));
  } else if (plan.action == OutputDirAction::kResume) {
    start.lines.push_back(absl::StrCat("Checkpoint detected, resuming training at ", plan.checkpoint, " (step ",
                                       plan.checkpoint_step, " of ", total_steps,
                                       "). To train from scratch instead, pass --overwrite_output_dir."));
  } else if (plan.action == OutputDirAction::kReplace) {
    start.lines.push_back(absl::StrCat("--overwrite_output_dir: training from scratch in ", plan.staging_dir,
                                       ", which replaces ", output_dir, " at the first checkpoint"));
  }
  return start;
}

}  // namespace xlmr::recipes
