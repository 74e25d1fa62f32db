#include "framework/train/training_checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <type_traits>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "framework/core/status_macros.h"
#include "framework/io/durable_file.h"
#include "framework/io/file_manifest.h"
#include "framework/io/safetensors.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {
namespace fs = std::filesystem;
namespace {

constexpr char kStateFile[] = "trainer_state.json";
constexpr char kOptimizerFile[] = "optimizer.safetensors";
// What a resume reads; a checkpoint's manifest must list them (it lists the tokenizer too).
const std::vector<std::string> kFilesResumeReads = {kOptimizerFile, kStateFile, "model.safetensors", "config.json"};


// log_history as HF writes it: an array of objects, each with an integer "step".
absl::Status CheckLogHistory(const nlohmann::ordered_json& history, const std::string& path) {
  if (!history.is_array()) return absl::InvalidArgumentError(absl::StrCat(path, ": log_history: expected an array"));
  for (size_t i = 0; i < history.size(); ++i) {
    const nlohmann::ordered_json& entry = history[i];
    if (!entry.is_object() || !entry.contains("step") || !entry.at("step").is_number_integer()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": log_history[", i, "]: expected an object with an integer \"step\""));
    }
  }
  return absl::OkStatus();
}

// j[name] as an integer of type Int. nlohmann's get<Int>() would also take a float and cast
// it (undefined behaviour when out of range: a fuzzed "global_step": 4e85 did that), so only a
// JSON integer that fits is accepted.
template <typename Int>
absl::StatusOr<Int> IntegerField(const nlohmann::ordered_json& j, const char* name, const std::string& path) {
  const nlohmann::ordered_json& value = j.at(name);
  const bool fits = value.is_number_unsigned()
                        ? value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<Int>::max())
                        : value.is_number_integer() &&
                              (std::is_signed_v<Int> || value.get<int64_t>() >= 0);
  if (!fits) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", name, ": expected an integer in range, got ", value.dump()));
  }
  return value.get<Int>();
}

absl::StatusOr<TrainingState> StateFromJson(const nlohmann::ordered_json& j, const std::string& path) {
  TrainingState s;
  try {
    const std::pair<const char*, int64_t*> integers[] = {
        {"global_step", &s.global_step},
        {"epoch", &s.epoch},
        {"step_in_epoch", &s.step_in_epoch},
        {"optimizer_steps", &s.optimizer_steps},
        {"loss_scale_growth_tracker", &s.loss_scale_growth_tracker},
        {"skipped_steps", &s.skipped_steps},
        {"examples_seen", &s.examples_seen},
        {"tokens_seen", &s.tokens_seen},
        {"allreduce_calls", &s.allreduce_calls},
        {"global_batch_size", &s.global_batch_size},
        {"train_examples", &s.train_examples}};
    for (const auto& [name, field] : integers) {
      XLMR_ASSIGN_OR_RETURN(*field, IntegerField<int64_t>(j, name, path));
    }
    XLMR_ASSIGN_OR_RETURN(s.seed, IntegerField<uint64_t>(j, "seed", path));
    s.loss_scale = j.at("loss_scale").get<double>();
    s.train_seconds = j.at("train_seconds").get<double>();
    // Best-model tracking: absent from checkpoints written before it existed.
    if (j.contains("best_metric") && !j.at("best_metric").is_null()) s.best_metric = j.at("best_metric").get<double>();
    if (j.contains("best_global_step")) {
      const nlohmann::ordered_json& step = j.at("best_global_step");
      if (!(step.is_number_integer() && step.get<int64_t>() >= -1)) {
        return absl::InvalidArgumentError(absl::StrCat(path, ": best_global_step: expected an integer >= -1, got ",
                                                       step.dump()));
      }
      s.best_global_step = step.get<int64_t>();
    }
    if (j.contains("best_model_checkpoint") && !j.at("best_model_checkpoint").is_null()) {
      s.best_model_checkpoint = j.at("best_model_checkpoint").get<std::string>();
    }
    if (j.contains("early_stopping_patience_counter")) {
      XLMR_ASSIGN_OR_RETURN(s.early_stopping_patience_counter,
                            IntegerField<int64_t>(j, "early_stopping_patience_counter", path));
    }
    // The log history and its running sums: absent from checkpoints written before them.
    if (j.contains("log_history")) {
      XLMR_RETURN_IF_ERROR(CheckLogHistory(j.at("log_history"), path));
      s.log_history = j.at("log_history");
    }
    if (j.contains("logging_loss_steps")) {
      XLMR_ASSIGN_OR_RETURN(s.logging_loss_steps, IntegerField<int64_t>(j, "logging_loss_steps", path));
      s.logging_loss_sum = j.at("logging_loss_sum").get<double>();
      s.total_loss_sum = j.at("total_loss_sum").get<double>();
    }
    if (j.contains("world_size")) {  // absent from checkpoints written before it was recorded
      XLMR_ASSIGN_OR_RETURN(s.world_size, IntegerField<int64_t>(j, "world_size", path));
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
  return s;
}

absl::Status WriteJsonFile(const std::string& path, const nlohmann::ordered_json& j) {
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat(path, ": write failed"));
  return absl::OkStatus();
}

// Trainer._rotate_checkpoints: the best checkpoint is moved to the second newest place of the
// list before the oldest beyond the limit are deleted, and a limit of 1 keeps 2 while the best
// is not the newest.
void PruneCheckpoints(const std::string& output_dir, int save_total_limit, const std::string& best_checkpoint) {
  if (save_total_limit <= 0) return;
  std::vector<std::pair<int64_t, std::string>> all = ListCheckpoints(output_dir);
  const fs::path best_name = fs::path(best_checkpoint).filename();
  const auto best = std::find_if(all.begin(), all.end(), [&](const auto& c) {
    return !best_checkpoint.empty() && fs::path(c.second).filename() == best_name;
  });
  size_t limit = static_cast<size_t>(save_total_limit);
  if (best != all.end()) {
    if (best + 1 != all.end()) {
      std::rotate(best, best + 1, all.end() - 1);  // the best now second newest
      if (limit == 1) limit = 2;
    }
  }
  for (size_t i = 0; i + limit < all.size(); ++i) {
    std::error_code ignored;
    fs::remove_all(all[i].second, ignored);
  }
}

// The model, the moments and the trainer state in `temp_dir`; returns the files' names.
absl::StatusOr<std::vector<std::string>> WriteCheckpointFiles(const std::string& temp_dir, const TrainingState& state,
                                                              const Tensor& exp_avg, const Tensor& exp_avg_sq,
                                                              const SaveModelFn& save_model,
                                                              const std::vector<io::ElementRange>& moment_ranges) {
  XLMR_ASSIGN_OR_RETURN(std::vector<std::string> files, save_model(temp_dir));
  XLMR_RETURN_IF_ERROR(io::WriteSafetensors(
      temp_dir + "/" + kOptimizerFile,
      {{"exp_avg", exp_avg, moment_ranges}, {"exp_avg_sq", exp_avg_sq, moment_ranges}}, {{"format", "pt"}}));
  files.push_back(kOptimizerFile);
  XLMR_RETURN_IF_ERROR(WriteJsonFile(temp_dir + "/" + kStateFile, TrainerStateJson(state)));
  files.push_back(kStateFile);
  return files;
}

// Renames the sealed `temp_dir` to `final_dir` and flushes `output_dir`, so that the new name
// is on disk too.
absl::Status PublishCheckpoint(const std::string& temp_dir, const std::string& final_dir,
                               const std::string& output_dir) {
  std::error_code error;
  fs::remove_all(final_dir, error);  // a checkpoint of the same step from an earlier run
  fs::rename(temp_dir, final_dir, error);
  if (error) return absl::DataLossError(absl::StrCat(final_dir, ": rename failed: ", error.message()));
  return io::SyncDirectory(output_dir);
}

// A line for a checkpoint that has no manifest.json.
std::string UnverifiedLine(const std::string& directory) {
  return absl::StrCat(directory, " has no ", io::kManifestFileName,
                      " (written before checksums were recorded): its files could not be verified");
}

}  // namespace

nlohmann::ordered_json TrainerStateJson(const TrainingState& s) {
  return {{"global_step", s.global_step},
          {"epoch", s.epoch},
          {"step_in_epoch", s.step_in_epoch},
          {"optimizer_steps", s.optimizer_steps},
          {"loss_scale", s.loss_scale},
          {"loss_scale_growth_tracker", s.loss_scale_growth_tracker},
          {"skipped_steps", s.skipped_steps},
          {"examples_seen", s.examples_seen},
          {"tokens_seen", s.tokens_seen},
          {"allreduce_calls", s.allreduce_calls},
          {"train_seconds", s.train_seconds},
          {"seed", s.seed},
          {"global_batch_size", s.global_batch_size},
          {"train_examples", s.train_examples},
          {"best_metric", s.best_metric.has_value() ? nlohmann::ordered_json(*s.best_metric)
                                                    : nlohmann::ordered_json(nullptr)},
          {"best_global_step", s.best_global_step},
          {"best_model_checkpoint", s.best_model_checkpoint.empty() ? nlohmann::ordered_json(nullptr)
                                                                    : nlohmann::ordered_json(s.best_model_checkpoint)},
          {"early_stopping_patience_counter", s.early_stopping_patience_counter},
          {"world_size", s.world_size},
          {"logging_loss_sum", s.logging_loss_sum},
          {"logging_loss_steps", s.logging_loss_steps},
          {"total_loss_sum", s.total_loss_sum},
          {"log_history", s.log_history}};
}

bool IsTemporaryCheckpointName(const std::string& name) {
  // The name SaveTrainingCheckpoint gives a checkpoint in progress, and nothing else.
  static const std::regex kTemporaryName(R"(checkpoint-[0-9]+\.tmp-[0-9]+)");
  return std::regex_match(name, kTemporaryName);
}

std::vector<std::string> RemoveTemporaryCheckpoints(const std::string& output_dir) {
  std::vector<std::string> removed;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(output_dir, error)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || !IsTemporaryCheckpointName(name)) continue;
    std::error_code ignored;
    if (fs::remove_all(entry.path(), ignored) > 0 && !ignored) removed.push_back(name);
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

std::vector<std::pair<int64_t, std::string>> ListCheckpoints(const std::string& output_dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(output_dir, error)) {
    const std::string name = entry.path().filename().string();
    int64_t step = 0;
    if (entry.is_directory() && absl::StartsWith(name, "checkpoint-") &&
        absl::SimpleAtoi(name.substr(11), &step)) {
      found.emplace_back(step, entry.path().string());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

absl::Status SaveTrainingCheckpoint(const std::string& output_dir, const TrainingState& state,
                                    const Tensor& exp_avg, const Tensor& exp_avg_sq,
                                    const SaveModelFn& save_model, int save_total_limit,
                                    const std::vector<io::ElementRange>& moment_ranges) {
  const std::string final_dir = absl::StrCat(output_dir, "/checkpoint-", state.global_step);
  const std::string temp_dir = absl::StrCat(final_dir, ".tmp-", getpid());
  std::error_code error;
  fs::remove_all(temp_dir, error);
  fs::create_directories(temp_dir, error);
  if (error) return absl::PermissionDeniedError(absl::StrCat(temp_dir, ": ", error.message()));
  absl::StatusOr<std::vector<std::string>> files =
      WriteCheckpointFiles(temp_dir, state, exp_avg, exp_avg_sq, save_model, moment_ranges);
  absl::Status status = files.status();
  // Sealed before it is published: under its final name a checkpoint always has its manifest,
  // and its files, their names and the manifest are on disk.
  if (status.ok()) status = io::WriteManifest(temp_dir, *files);
  if (status.ok()) status = PublishCheckpoint(temp_dir, final_dir, output_dir);
  if (!status.ok()) {
    // Nothing under a checkpoint's name was touched: the earlier checkpoints are whole, and
    // pruning (below) never ran, so the run can stop and be resumed from the last of them.
    fs::remove_all(temp_dir, error);
    const std::vector<std::pair<int64_t, std::string>> kept = ListCheckpoints(output_dir);
    return absl::Status(status.code(),
                        absl::StrCat("saving checkpoint-", state.global_step, " failed: ", status.message(), "; ",
                                     kept.empty() ? std::string("there is no earlier checkpoint")
                                                  : absl::StrCat(kept.back().second, " is intact"),
                                     ", the run stopped"));
  }
  PruneCheckpoints(output_dir, save_total_limit, state.best_model_checkpoint);
  return absl::OkStatus();
}

ResumePoint FindLastValidCheckpoint(const std::string& output_dir) {
  ResumePoint point;
  const std::vector<std::pair<int64_t, std::string>> checkpoints = ListCheckpoints(output_dir);
  for (auto it = checkpoints.rbegin(); it != checkpoints.rend(); ++it) {
    const absl::StatusOr<io::ManifestCheck> verified = VerifyCheckpoint(it->second, it->first);
    if (!verified.ok()) {
      point.lines.push_back(absl::StrCat("Passing over ", it->second, ": ", verified.status().message()));
      continue;
    }
    if (*verified == io::ManifestCheck::kNoManifest) point.lines.push_back(UnverifiedLine(it->second));
    point.directory = it->second;
    point.step = it->first;
    return point;
  }
  return point;
}

absl::StatusOr<ResumePoint> ResolveCheckpoint(const std::string& flag_value, const std::string& output_dir) {
  if (flag_value == "latest") {
    ResumePoint point = FindLastValidCheckpoint(output_dir);
    if (point.directory.empty()) {
      const std::string why = point.lines.empty() ? "" : absl::StrCat(" (", point.lines.front(), ")");
      return absl::NotFoundError(
          absl::StrCat("--resume_from_checkpoint=latest: no valid checkpoint-<step> in ", output_dir, why));
    }
    return point;
  }
  ResumePoint point;
  point.directory = flag_value;
  if (!fs::exists(flag_value + "/" + kStateFile)) {
    return absl::NotFoundError(absl::StrCat("--resume_from_checkpoint=", flag_value, ": ", flag_value,
                                            " is not a training checkpoint (no ", kStateFile, ")"));
  }
  const absl::StatusOr<io::ManifestCheck> verified = io::VerifyManifest(flag_value, kFilesResumeReads);
  if (!verified.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--resume_from_checkpoint=", flag_value, ": ",
                                                   verified.status().message()));
  }
  if (*verified == io::ManifestCheck::kNoManifest) point.lines.push_back(UnverifiedLine(flag_value));
  return point;
}

absl::Status CheckCheckpointComplete(const std::string& directory, int64_t step) {
  for (const char* name : {kOptimizerFile, "model.safetensors", "config.json"}) {
    std::error_code error;
    const std::string path = directory + "/" + name;
    if (!fs::is_regular_file(path, error) || fs::file_size(path, error) == 0 || error) {
      return absl::FailedPreconditionError(absl::StrCat(path, " is missing or empty"));
    }
  }
  const std::string state_path = directory + "/" + kStateFile;
  std::ifstream in(state_path);
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::FailedPreconditionError(absl::StrCat(state_path, ": missing or invalid JSON"));
  absl::StatusOr<TrainingState> state = StateFromJson(j, state_path);
  if (!state.ok()) return absl::FailedPreconditionError(state.status().message());
  if (state->global_step != step) {
    return absl::FailedPreconditionError(
        absl::StrCat(state_path, ": global_step is ", state->global_step, ", the directory says ", step));
  }
  return absl::OkStatus();
}

absl::StatusOr<io::ManifestCheck> VerifyCheckpoint(const std::string& directory, int64_t step) {
  XLMR_ASSIGN_OR_RETURN(const io::ManifestCheck check, io::VerifyManifest(directory, kFilesResumeReads));
  XLMR_RETURN_IF_ERROR(CheckCheckpointComplete(directory, step));
  return check;
}

absl::StatusOr<LoadedCheckpoint> LoadTrainingCheckpoint(const std::string& directory,
                                                        int64_t num_parameters) {
  const std::string state_path = directory + "/" + kStateFile;
  std::ifstream in(state_path);
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(state_path, ": invalid JSON"));
  LoadedCheckpoint loaded;
  XLMR_ASSIGN_OR_RETURN(loaded.state, StateFromJson(j, state_path));
  XLMR_ASSIGN_OR_RETURN(io::SafetensorsFile file, io::ReadSafetensors(directory + "/" + kOptimizerFile));
  XLMR_ASSIGN_OR_RETURN(loaded.exp_avg, io::ToTensor(file, "exp_avg", Device::kCpu, MemoryCategory::kOptimizer));
  XLMR_ASSIGN_OR_RETURN(loaded.exp_avg_sq,
                        io::ToTensor(file, "exp_avg_sq", Device::kCpu, MemoryCategory::kOptimizer));
  if (loaded.exp_avg.numel() != num_parameters || loaded.exp_avg_sq.numel() != num_parameters) {
    return absl::InvalidArgumentError(absl::StrCat(directory, "/", kOptimizerFile, ": moments have ",
                                                   loaded.exp_avg.numel(), " elements, the model has ",
                                                   num_parameters, " parameters"));
  }
  return loaded;
}

absl::Status CheckCompatible(const TrainingState& resumed, const TrainingState& current,
                             const std::string& directory) {
  auto mismatch = [&](const char* what, auto then, auto now) {
    return absl::InvalidArgumentError(absl::StrCat("--resume_from_checkpoint=", directory, ": ", what,
                                                   " was ", then, ", is now ", now,
                                                   "; resume with the original setting"));
  };
  if (resumed.seed != current.seed) return mismatch("--seed", resumed.seed, current.seed);
  if (resumed.global_batch_size != current.global_batch_size) {
    return mismatch("the global batch (per_device_train_batch_size x gradient_accumulation_steps x ranks)",
                    resumed.global_batch_size, current.global_batch_size);
  }
  if (resumed.train_examples != current.train_examples) {
    return mismatch("the number of training examples", resumed.train_examples, current.train_examples);
  }
  return absl::OkStatus();
}

}  // namespace xlmr::train
