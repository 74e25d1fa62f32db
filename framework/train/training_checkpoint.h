// Training checkpoints: `<output_dir>/checkpoint-<step>/` holds the model as a Hugging Face
// directory (written by the caller's SaveModelFn; its fp32 weights are the masters, so they
// are not stored twice) plus
//   optimizer.safetensors  the flat AdamW moments "exp_avg" and "exp_avg_sq" (f32)
//   trainer_state.json     step counters, data cursor, loss-scaler state, RNG seed and the run
//                          settings that must not change across a resume
//   manifest.json          every other file's size and CRC32C (framework/io/file_manifest.h).
// A checkpoint is written under a temporary name, sealed (each file checksummed and flushed to
// disk, the manifest written, the directory flushed) and then renamed, and the output
// directory flushed after the rename, so neither a crash nor a power loss leaves a half
// checkpoint behind a valid name; then the oldest ones beyond save_total_limit are deleted.
// Before a checkpoint is resumed from, its files are verified against its manifest
// (VerifyCheckpoint): a checkpoint whose bytes changed is passed over, or refused when named.
#ifndef XLMR_FRAMEWORK_TRAIN_TRAINING_CHECKPOINT_H_
#define XLMR_FRAMEWORK_TRAIN_TRAINING_CHECKPOINT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "framework/io/file_manifest.h"
#include "framework/io/safetensors.h"
#include "framework/tensor/tensor.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {

// Everything besides weights and moments that an exact resume needs.
struct TrainingState {
  int64_t global_step = 0;    // optimizer steps done (skipped ones included)
  int64_t epoch = 0;          // data cursor: the next step is (epoch, step_in_epoch)
  int64_t step_in_epoch = 0;
  int64_t optimizer_steps = 0;  // AdamW's step count (skipped steps excluded)
  double loss_scale = 1.0;
  int64_t loss_scale_growth_tracker = 0;
  int64_t skipped_steps = 0;
  int64_t examples_seen = 0;
  int64_t tokens_seen = 0;
  int64_t allreduce_calls = 0;
  double train_seconds = 0;
  // Settings a resumed run must share with the original (else the data order or the update
  // rule would differ): checked by CheckCompatible.
  uint64_t seed = 0;
  int64_t global_batch_size = 0;
  int64_t train_examples = 0;
  // --load_best_model_at_end / --early_stopping_patience (HF TrainerState's names): the best
  // value of --metric_for_best_model so far and the step of that evaluation (-1: none yet), the
  // checkpoint holding its weights (empty until that step is saved), and EarlyStoppingCallback's
  // count of evaluations without an improvement. Absent from older checkpoints: none, 0.
  std::optional<double> best_metric;
  int64_t best_global_step = -1;
  std::string best_model_checkpoint;
  int64_t early_stopping_patience_counter = 0;
  // HF TrainerState.log_history (framework/train/training_log.h): an array of entries, each an
  // object with an integer "step". The loss summed since its last training entry, over how many
  // steps, and over the whole run (for train_loss). Absent from older checkpoints: empty, 0.
  nlohmann::ordered_json log_history = nlohmann::ordered_json::array();
  double logging_loss_sum = 0;
  int64_t logging_loss_steps = 0;
  double total_loss_sum = 0;
  // The number of ranks that saved it (0: a checkpoint written before it was recorded). Not a
  // setting a resume must share: the moments are saved whole (docs/DECISIONS.md), so any world
  // size resumes, with the global batch checked as above.
  int64_t world_size = 0;
};

// trainer_state.json's content for `state`: what each checkpoint holds; the final output_dir
// gets one too (with the whole log history), as HF's trainer.save_state() writes it.
nlohmann::ordered_json TrainerStateJson(const TrainingState& state);

// Writes the model into `directory` and returns the names of the files it wrote there (each
// goes into the directory's manifest).
using SaveModelFn = std::function<absl::StatusOr<std::vector<std::string>>(const std::string& directory)>;

// Writes checkpoint-<state.global_step> under output_dir and prunes old ones (HF's rotation:
// state.best_model_checkpoint (matched by its name), when there is one, is never deleted; it counts
// towards save_total_limit, and with a limit of 1 the best and the newest are both kept). On a failure
// (disk full, I/O error) the temporary directory is removed, nothing is pruned, and the error
// names the checkpoint, the cause and the last earlier checkpoint (intact).
// exp_avg and exp_avg_sq are written whole, or with `moment_ranges` only those element ranges
// of them, back to back (the packed layout, written from the padded flat buffers directly).
absl::Status SaveTrainingCheckpoint(const std::string& output_dir, const TrainingState& state,
                                    const Tensor& exp_avg, const Tensor& exp_avg_sq,
                                    const SaveModelFn& save_model, int save_total_limit,
                                    const std::vector<io::ElementRange>& moment_ranges = {});

// The checkpoint a resume reads and the lines to print about how it was chosen: the
// checkpoints passed over (each naming its damaged file and what failed), or that it has no
// manifest and could not be verified.
struct ResumePoint {
  std::string directory;  // empty when no checkpoint qualifies
  int64_t step = -1;
  std::vector<std::string> lines;
};

// The last checkpoint-<N> of output_dir that VerifyCheckpoint accepts, the later ones passed
// over (each with a line). `directory` stays empty when none is accepted.
ResumePoint FindLastValidCheckpoint(const std::string& output_dir);

// `--resume_from_checkpoint` value -> a verified checkpoint directory: "latest" is
// FindLastValidCheckpoint (NotFound when none is valid); anything else is a path that must
// hold trainer_state.json and whose files must match its manifest (InvalidArgument, one line
// naming the file and what failed, when they do not: a checkpoint named explicitly is never
// replaced by another).
absl::StatusOr<ResumePoint> ResolveCheckpoint(const std::string& flag_value, const std::string& output_dir);

// Reads trainer_state.json and the moments (which must have `num_parameters` elements).
struct LoadedCheckpoint {
  TrainingState state;
  Tensor exp_avg, exp_avg_sq;  // [num_parameters] f32, host
};
absl::StatusOr<LoadedCheckpoint> LoadTrainingCheckpoint(const std::string& directory,
                                                        int64_t num_parameters);

// An error naming the setting when `resumed` cannot continue under `current`.
absl::Status CheckCompatible(const TrainingState& resumed, const TrainingState& current,
                             const std::string& directory);

// OK when `directory` holds a checkpoint of `step` that a resume can read: trainer_state.json
// parses and names that step, and optimizer.safetensors, model.safetensors and config.json are
// non-empty files. Otherwise FailedPrecondition saying what is wrong. Cheap (the tensors are
// not read): it picks the checkpoint to resume from, and a checkpoint only ever appears under
// its name complete (it is renamed into place), so what it catches is a damaged directory.
absl::Status CheckCheckpointComplete(const std::string& directory, int64_t step);

// CheckCheckpointComplete, after every file listed in the directory's manifest.json (which must
// list the model, the moments, config.json and trainer_state.json) is checked for its size and
// CRC32C: kVerified, or kNoManifest for a checkpoint written before manifests existed (still
// resumable, unverified). DataLoss or FailedPrecondition, one line naming the file and what
// failed. Reads every file once (bench/checkpoint_io_bench.cc: no longer than reading them).
absl::StatusOr<io::ManifestCheck> VerifyCheckpoint(const std::string& directory, int64_t step);

// Removes the temporary checkpoint directories ("checkpoint-<N>.tmp-<pid>", exactly that
// pattern) that a run killed while saving left in output_dir; a run calls it at its start, on
// rank 0, before it saves anything. Two runs writing one output_dir at once are not supported,
// so every such directory there belongs to a dead run. Returns the names removed.
std::vector<std::string> RemoveTemporaryCheckpoints(const std::string& output_dir);

// Whether `name` is that of a checkpoint being written: "checkpoint-<N>.tmp-<pid>".
bool IsTemporaryCheckpointName(const std::string& name);

// checkpoint-<N> directories in output_dir, sorted by N.
std::vector<std::pair<int64_t, std::string>> ListCheckpoints(const std::string& output_dir);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_TRAINING_CHECKPOINT_H_
