// What xlmr_finetune does with an --output_dir that already holds something: the rules of
// Hugging Face's example scripts (run_glue.py, run_ner.py: "Detecting last checkpoint"), so
// that running the same command twice never destroys a run, and a job requeued after
// preemption just runs its command again and continues. Decided before any work:
//
//   --resume_from_checkpoint given              resume from it, write in place (as always)
//   output_dir missing or empty                 start, write in place
//   --overwrite_output_dir, output_dir holds    start from scratch in <output_dir>.overwriting,
//     an earlier run                              which replaces output_dir at the first
//                                                 checkpoint (until then the old run stays whole)
//   a valid checkpoint-<step> in output_dir     resume from the last valid one (its files match
//                                                 its manifest; later ones are passed over, a
//                                                 line each); when the run already finished
//                                                 there: nothing left to do
//   only what a run writes before its first     start again from scratch, write in place (one
//     checkpoint: metrics.jsonl of progress       line says so): a job killed before its first
//     records, checkpoint-<N>.tmp-<pid>           checkpoint is requeued with the same command
//   anything else in output_dir                 stop: exit 2, one line naming both flags (and,
//                                                 when checkpoints failed verification, the file)
//
// (--overwrite_output_dir with --resume_from_checkpoint: resumes from that checkpoint, read
// before anything moves, and replaces output_dir as above.) Under mpirun rank 0 decides and
// every rank follows (AgreeOnOutputDir). docs/DECISIONS.md says why each rule is what it is.
#ifndef XLMR_RECIPES_OUTPUT_DIR_POLICY_H_
#define XLMR_RECIPES_OUTPUT_DIR_POLICY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/distributed/communicator.h"
#include "recipes/finetune_flags.h"

namespace xlmr::recipes {

struct OutputDirRequest {
  std::string output_dir;
  bool overwrite_output_dir = false;
  bool resume_from_checkpoint_given = false;
  bool writes_nothing = false;  // --print_memory_plan: the directory is not looked at
  // The user's working directory: overwriting never removes a directory that contains it.
  std::string working_directory;
};

enum class OutputDirAction {
  kWriteInPlace,  // a fresh run, or an explicit --resume_from_checkpoint
  kResume,        // the last valid checkpoint in output_dir
  kReplace,       // --overwrite_output_dir: a fresh run staged beside output_dir
};

struct OutputDirPlan {
  OutputDirAction action = OutputDirAction::kWriteInPlace;
  // kResume:
  std::string checkpoint;      // <output_dir>/checkpoint-<step>, the last valid one
  int64_t checkpoint_step = 0;
  bool finished = false;       // output_dir's final model is that of the run ended at checkpoint_step
  bool stopped_early = false;  // ... and early stopping ended it (nothing is left to do either)
  // Lines to print before the run starts: checkpoints passed over (naming the file and what
  // failed), a checkpoint without a manifest (unverified), a run restarted from scratch.
  std::vector<std::string> lines;
  // kReplace:
  std::string staging_dir;     // <output_dir>.overwriting
};

// Looks at output_dir (reads only) and decides. InvalidArgument, one line naming the flags:
// output_dir is not a directory; it is not empty and holds no valid checkpoint, nor only what a
// run writes before its first checkpoint (without --overwrite_output_dir); with --overwrite_output_dir, it holds an entry no run of
// xlmr_finetune writes (it would be deleted with the old run), it contains the working
// directory, it is a symbolic link or a mount point (it could not be replaced by renaming).
absl::StatusOr<OutputDirPlan> DecideOutputDir(const OutputDirRequest& request);

// Rank 0 runs DecideOutputDir and every rank returns its plan or its error. A collective.
absl::StatusOr<OutputDirPlan> AgreeOnOutputDir(distributed::Communicator& comm, const OutputDirRequest& request);

// The request for this command line, and the plan applied to it: kResume sets the checkpoint
// to resume from, kReplace the trainer's staging directory.
OutputDirRequest OutputDirRequestFor(const FinetuneConfig& config);
void ApplyOutputDirPlan(const OutputDirPlan& plan, FinetuneConfig& config);

// What rank 0 prints once the run knows its length (`total_steps`), right before training,
// and whether the run stops there: a resumed run whose final model is already written at or
// beyond total_steps has nothing left to do and writes nothing.
struct OutputDirStart {
  std::vector<std::string> lines;
  bool nothing_left_to_do = false;
};
OutputDirStart DescribeStart(const OutputDirPlan& plan, const std::string& output_dir, int64_t total_steps);

// The entries a run of xlmr_finetune writes into its output directory: the final model
// (config.json, model.safetensors, any family's tokenizer files), metrics.jsonl,
// eval_results.json, manifest.json, checkpoint-<step> and checkpoint-<step>.tmp-<pid>, and
// question answering's eval_ / predict_ predictions.json, nbest_predictions.json,
// null_odds.json (and their .tmp while written).
bool IsRunOutput(const std::string& entry_name);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_OUTPUT_DIR_POLICY_H_
