// The command line of xlmr_finetune (docs/CONTRACT.md): flag names and defaults
// follow Hugging Face TrainingArguments. ReadFinetuneFlags() turns the parsed flags into a
// FinetuneConfig and validates every value, so that a bad flag stops the run before any work
// with one line naming the flag and what was expected.
#ifndef XLMR_RECIPES_FINETUNE_FLAGS_H_
#define XLMR_RECIPES_FINETUNE_FLAGS_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/core/device.h"
#include "framework/data/qa_features.h"
#include "framework/data/record_reader.h"
#include "framework/data/tagged_sentence_reader.h"
#include "framework/ops/gpu_gemm_algorithms.h"
#include "framework/recompute/memory_budget.h"
#include "framework/train/qa_postprocessing.h"
#include "framework/train/trainer.h"
#include "models/encoder/config.h"
#include "recipes/embedding_flags.h"

namespace xlmr::recipes {

struct FinetuneConfig {
  std::string model_dir;  // empty: the embedded tiny model (random init)
  std::string train_file, eval_file, test_file;  // resolved paths (embedded data by default)
  data::ColumnSpec columns;
  data::WordTagColumns tagged_columns;  // --tokens_column, --tags_column (token classification)
  EmbeddingSettings embedding;          // --task=sentence_embedding's columns, pooling and scale
  // --task, or what the model directory's config.json says (EncoderConfig::task).
  models::Task task = models::Task::kSequenceClassification;
  bool task_given = false;  // --task was on the command line
  int max_seq_length = 128;  // 384 for question answering unless given (run_qa's default)
  // Question answering: --doc_stride (windows; max_seq_length is copied in) and --n_best_size,
  // --max_answer_length, --version_2_with_negative, --null_score_diff_threshold.
  data::QaFeatureOptions qa_features;
  train::QaPostprocessOptions qa_postprocess;
  std::optional<double> dropout;  // overrides hidden, attention and classifier dropout
  bool gradient_checkpointing = false;
  // --activation_memory_budget, parsed here (the only place); unset when not given.
  std::optional<recompute::MemoryBudget> activation_memory_budget;
  bool print_memory_plan = false;
  // --attention; blocks fall back to eager where no fused kernel exists (AttentionFallbackNote).
  models::AttentionImplementation attention = models::AttentionImplementation::kFused;
  DeviceChoice device = DeviceChoice::kAuto;
  ops::GpuGemmAlgorithms gemm_algorithms = ops::GpuGemmAlgorithms::kHeuristic;
  std::string cache_dir;  // tokenized-data cache
  bool overwrite_output_dir = false;  // recipes/output_dir_policy.h
  bool resume = false;    // --resume_from_checkpoint given
  std::string resume_from_checkpoint;  // the flag's value ("latest" or a path)
  train::TrainerOptions trainer;
  // The embedded default's training arguments that were applied ("name=value"), for the log,
  // and the file they came from.
  std::vector<std::string> embedded_training_args;
  std::string embedded_training_args_file;
  // --model_dir's recorded prediction settings (prediction_args.h) that differ from flags given
  // on the command line: one line for the log, empty when none differs.
  std::string trained_args_differences;
};

// Reads the absl flags (after absl::ParseCommandLine); `given` names the flags the command
// line set (FlagsGiven), which decides the embedded default's training arguments and which of
// --model_dir's recorded prediction settings (prediction_args.json, when the run trains the
// model's own task) become flag values. InvalidArgument names the flag (or the file).
absl::StatusOr<FinetuneConfig> ReadFinetuneFlags(const std::set<std::string>& given);

// What the run minimises: the task's objective (models::ObjectiveOf), or for a sentence
// embedding the one of its --embedding_loss.
train::Objective TrainingObjective(const FinetuneConfig& config);

// The embedded default's files (recipes/data/langid) inside the runfiles tree.
std::string EmbeddedDataFile(const std::string& name);
// The directory under recipes/data of `task`'s embedded example: langid_ner for token
// classification, langid_qa for question answering, langid_bitext for sentence embedding, else
// langid.
std::string EmbeddedExampleName(models::Task task);
// A file of `task`'s embedded example (its data splits and training_args.json); the tokenizer
// is langid's for all of them.
std::string EmbeddedDataFile(models::Task task, const std::string& name);
// The model config of `task`'s embedded example: langid_qa/config.json for question answering
// (a model sized for that task), else langid's.
std::string EmbeddedModelConfigFile(models::Task task);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_FINETUNE_FLAGS_H_
