// xlmr_finetune: fine-tunes XLM-RoBERTa, RoBERTa, CamemBERT or BERT for sequence classification, regression, token
// classification or extractive question answering (--task; docs/CONTRACT.md).
//
//   bazel run //recipes:xlmr_finetune                      # the embedded default, a few minutes on CPU
//   bazel run //recipes:xlmr_finetune -- --task=question_answering   # its embedded QA example
//   bazel run //recipes:xlmr_finetune -- --model_dir=xlm-roberta-base --train_file=train.tsv ...
//   mpirun -np N bazel-bin/recipes/xlmr_finetune [same flags]
//
// Exit status: 0 done; 2 a flag, file or row was invalid (one line says which, nothing was
// written); 1 training failed (e.g. the fp16 loss scale collapsed); 143 / 130 stopped by
// SIGTERM / SIGINT after saving a checkpoint (the same command resumes).
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/core/status_macros.h"
#include "framework/distributed/create_communicator.h"
#include "framework/distributed/rank_agreement.h"
#include "framework/io/durable_file.h"
#include "framework/io/whole_file.h"
#include "framework/ops/cpu_gemm_library.h"
#include "framework/train/embedding_evaluate.h"
#include "framework/train/qa_evaluate.h"
#include "framework/train/qa_prediction_files.h"
#include "framework/train/stop_signal.h"
#include "models/encoder/hf_checkpoint.h"
#include "models/model_tokenizer.h"
#include "models/encoder/init.h"
#include "recipes/command_line.h"
#include "recipes/common_flags.h"
#include "recipes/device_choice.h"
#include "recipes/embedded_default.h"
#include "recipes/finetune_data.h"
#include "recipes/finetune_flags.h"
#include "recipes/memory_plan.h"
#include "recipes/output_dir_policy.h"
#include "recipes/prediction_args.h"
#include "recipes/program_usage.h"
#include "recipes/runfiles.h"
#include "recipes/cross_encoder_files.h"
#include "recipes/sentence_transformers_files.h"
#include "recipes/test_predictions.h"
#include "recipes/tokenize_fn.h"


namespace {

// What --help prints before the flags.
constexpr char kUsage[] =
    "fine-tunes XLM-RoBERTa, RoBERTa, CamemBERT or BERT (config.json's model_type in --model_dir) for sequence "
    "classification, regression, token classification, question answering, sentence embeddings or reranking "
    "(--task) and saves a Hugging Face model directory, a sentence-transformers one for the last two "
    "(docs/CONTRACT.md).\n\n"
    "  xlmr_finetune                      the embedded default: a small model on recipes/data/langid, minutes on a CPU\n"
    "  xlmr_finetune --task=token_classification | --task=question_answering | --task=sentence_embedding\n"
    "                                     the embedded examples of those tasks (recipes/data/langid_ner, langid_qa,\n"
    "                                     langid_bitext)\n"
    "  xlmr_finetune --model_dir=DIR --train_file=FILE [--eval_file=FILE] [--test_file=FILE] [flags]\n"
    "  mpirun -np N xlmr_finetune [the same flags]\n\n"
    "Exit status: 0 done; 2 a flag, file or row was invalid; 1 training failed; 143 / 130 stopped by SIGTERM / "
    "SIGINT after saving a checkpoint (the same command resumes).";

}  // namespace

namespace xlmr::recipes {
namespace {

// A tokenizer file of the model, kept in memory: every saved directory gets a copy, also after
// the checkpoint it was read from has been rotated away.
struct TokenizerFile {
  std::string name;   // e.g. "merges.txt"
  std::string bytes;  // its content as read
};


// Everything built before training starts; building it is where user input is validated.
struct PreparedRun {
  FinetuneConfig config;
  std::unique_ptr<distributed::Communicator> comm;
  // The tokenizer files of the directory the weights come from (--model_dir, the checkpoint
  // resumed or the embedded default's).
  std::vector<TokenizerFile> tokenizer_files;
  std::optional<FinetuneData> data;
  std::unique_ptr<models::EncoderModel> model;
  OutputDirPlan output_plan;
  // prediction_args.json's text: the settings this run read its data with, which every saved
  // directory records for xlmr_predict (prediction_args.h).
  std::string prediction_args;
};

// The model: from --model_dir (or the checkpoint being resumed), else the embedded config
// with random weights. Its head gets the training file's labels.
absl::Status BuildModel(PreparedRun& run, const std::string& weights_dir, Device device) {
  const FinetuneConfig& c = run.config;
  const std::vector<std::string>& labels = run.data->labels.id2label();
  if (!weights_dir.empty()) {
    models::LoadOptions options;
    options.labels = labels;
    options.task = c.task;
    options.seed = c.trainer.seed;
    options.device = device;
    options.dropout = c.dropout;
    options.attention = c.attention;
    options.pooling = c.embedding.pooling;
    options.normalize_embeddings = c.embedding.normalize;
    XLMR_ASSIGN_OR_RETURN(models::LoadedModel loaded, models::LoadPretrained(weights_dir, options));
    if (c.resume && loaded.fresh_head) {
      return absl::InvalidArgumentError(absl::StrCat("--resume_from_checkpoint: ", weights_dir, " was trained for ",
                                                     "another task or other labels than --task=",
                                                     models::TaskName(c.task), " on ", c.train_file));
    }
    run.model = std::move(loaded.model);
    return absl::OkStatus();
  }
  XLMR_ASSIGN_OR_RETURN(models::EncoderConfig config, models::LoadEncoderConfig(EmbeddedModelConfigFile(c.task)));
  config.id2label = labels;
  config.task = c.task;
  config.attention = c.attention;
  config.pooling = c.embedding.pooling;
  config.normalize_embeddings = c.embedding.normalize;
  if (c.dropout.has_value()) models::OverrideDropout(config, *c.dropout);
  run.model = std::make_unique<models::EncoderModel>(std::move(config), device);
  models::InitializeAllWeights(*run.model, c.trainer.seed);
  return absl::OkStatus();
}

// One line when --attention=fused cannot be had for this model on this device.
void PrintAttentionFallback(const models::EncoderConfig& config, Device device, DType activations) {
  if (config.attention != models::AttentionImplementation::kFused) return;
  if (models::FusedAttentionApplies(config, device, activations)) return;
  std::fprintf(stderr, "xlmr_finetune: --attention=fused: no fused kernel for head_dim %lld in %s on %s; "
               "using eager attention\n", static_cast<long long>(config.head_dim()), DTypeName(activations),
               DeviceName(device));
}

// Every flag of this program with its value as given (Abseil's own flags, e.g. --flagfile,
// left out: what they load is compared instead), for the check that all ranks agree.
std::vector<distributed::Setting> FlagSettings() {
  std::vector<distributed::Setting> settings;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!IsProgramFlagFile(flag->Filename())) continue;
    settings.push_back({std::string(name), flag->CurrentValue()});
  }
  return settings;
}

// The verified checkpoint a resume reads: the one rank 0 chose and verified under the rerun
// rules, or --resume_from_checkpoint's (a path, or "latest"), verified here; rank 0 prints how
// it was chosen (checkpoints passed over, or unverified).
absl::StatusOr<std::string> CheckpointToResume(PreparedRun& run) {
  FinetuneConfig& c = run.config;
  if (run.output_plan.action != OutputDirAction::kResume) {
    XLMR_ASSIGN_OR_RETURN(const train::ResumePoint point,
                          train::ResolveCheckpoint(c.resume_from_checkpoint, c.trainer.output_dir));
    for (const std::string& line : point.lines) {
      if (run.comm->rank() == 0) std::fprintf(stderr, "%s\n", line.c_str());
    }
    c.resume_from_checkpoint = point.directory;
  }
  c.trainer.resume_from_checkpoint = c.resume_from_checkpoint;
  return c.resume_from_checkpoint;
}

// The bytes of `directory`/`names`; errors name a file that cannot be read (io::ReadWholeFile).
absl::StatusOr<std::vector<TokenizerFile>> ReadTokenizerFiles(const std::string& directory,
                                                              const std::vector<std::string>& names) {
  std::vector<TokenizerFile> files;
  for (const std::string& name : names) {
    XLMR_ASSIGN_OR_RETURN(std::string bytes, io::ReadWholeFile(directory + "/" + name));
    files.push_back({name, std::move(bytes)});
  }
  return files;
}

// The tokenizer of the directory the weights come from (`weights_dir`: --model_dir, or the
// checkpoint resumed, which carries copies of --model_dir's tokenizer files verified with its
// manifest; empty: the embedded default's), of the family its config.json names, kept in
// `run.tokenizer_files`; then every data file tokenized with it into `run.data`.
absl::Status LoadTokenizerAndData(PreparedRun& run, const std::string& weights_dir) {
  const std::string tokenizer_dir =
      weights_dir.empty() ? std::filesystem::path(EmbeddedDataFile("config.json")).parent_path().string()
                          : weights_dir;
  // The embedded question-answering example has its own model config beside langid's tokenizer.
  const std::string config_path =
      weights_dir.empty() ? EmbeddedModelConfigFile(run.config.task) : tokenizer_dir + "/config.json";
  XLMR_ASSIGN_OR_RETURN(const models::EncoderConfig model_config, models::LoadEncoderConfig(config_path));
  XLMR_RETURN_IF_ERROR(CheckMaxSeqLengthFits(run.config.max_seq_length, model_config, config_path));
  XLMR_ASSIGN_OR_RETURN(const models::ModelTokenizer tokenizer,
                        models::LoadModelTokenizer(tokenizer_dir, model_config));
  XLMR_ASSIGN_OR_RETURN(run.tokenizer_files, ReadTokenizerFiles(tokenizer_dir, tokenizer.files));
  run.config.trainer.segment_separator_id = tokenizer.tokenizer->segment_separator_id();
  std::vector<std::string> tokenizer_paths;
  for (const std::string& name : tokenizer.files) tokenizer_paths.push_back(tokenizer_dir + "/" + name);
  XLMR_ASSIGN_OR_RETURN(FinetuneData data,
                        LoadFinetuneData(run.config, *tokenizer.tokenizer, tokenizer_paths, tokenizer.cache_tag));
  run.data.emplace(std::move(data));
  return absl::OkStatus();
}

// Fills `run`; on error `run.comm` is set when the communicator was created by then (the
// caller then agrees on the outcome with the other ranks).
absl::Status Prepare(const std::set<std::string>& given, PreparedRun& run) {
  XLMR_ASSIGN_OR_RETURN(run.config, ReadFinetuneFlags(given));
  FinetuneConfig& c = run.config;
  XLMR_ASSIGN_OR_RETURN(const distributed::LaunchEnvironment env, distributed::ReadLaunchEnvironment());
  XLMR_ASSIGN_OR_RETURN(const Device device, ChooseDevice(c.device, env.local_rank, env.rank == 0, "xlmr_finetune"));
  ops::UseGpuGemmAlgorithms(c.gemm_algorithms);
  XLMR_ASSIGN_OR_RETURN(run.comm, distributed::CreateCommunicator(env, device));
  const absl::Status same_flags = distributed::CheckSettingsMatchRankZero(*run.comm, FlagSettings());
  // A collective, so every rank reaches it whatever its flag check found.
  absl::StatusOr<OutputDirPlan> output_plan = AgreeOnOutputDir(*run.comm, OutputDirRequestFor(c));
  XLMR_RETURN_IF_ERROR(same_flags);
  XLMR_ASSIGN_OR_RETURN(run.output_plan, std::move(output_plan));
  ApplyOutputDirPlan(run.output_plan, c);
  c.trainer.device = device;
  std::string weights_dir = c.model_dir;
  if (c.resume) {
    XLMR_ASSIGN_OR_RETURN(weights_dir, CheckpointToResume(run));
  }
  if (!c.model_dir.empty()) XLMR_RETURN_IF_ERROR(CheckModelDir(c.model_dir));
  XLMR_RETURN_IF_ERROR(LoadTokenizerAndData(run, weights_dir));
  XLMR_RETURN_IF_ERROR(BuildModel(run, weights_dir, device));
  // Matrix products under --fp16 / --bf16 read a half working copy of the weights (the memory
  // probe's pass and every training step, which keeps it current): made once, here, now that the
  // weights are final; rounded at every read instead when the run trades time for memory.
  if (c.trainer.autocast != DType::kF32) {
    run.model->parameters().EnableHalfCopy(c.trainer.autocast, HalfCopyFor(MemoryPlanRequestFrom(c)));
  }
  if (run.comm->rank() == 0) PrintAttentionFallback(run.model->config(), device, c.trainer.autocast);
  // Packed micro-batches (the trainer's choice, trainer.cc) are planned for the most real
  // tokens B training examples hold, not for B x max_seq_length.
  const bool packed = c.trainer.padding_free && run.model->TakesPackedInputs(c.trainer.autocast);
  const PackedMicroBatch largest =
      packed ? LargestPackedMicroBatch(run.data->train, MemoryPlanRequestFrom(c, 1, {}).batch_size, c.max_seq_length)
             : PackedMicroBatch{};
  XLMR_RETURN_IF_ERROR(ConfigureRecompute(MemoryPlanRequestFrom(c, run.comm->world_size(), largest),
                                          *run.model, run.comm->rank() == 0));
  c.trainer.label_names = run.data->labels.id2label();
  c.trainer.objective = TrainingObjective(c);
  c.trainer.pad_id = static_cast<int32_t>(run.model->config().pad_token_id);
  const TextFlags text{c.columns.text_column, c.columns.text_pair_column, c.tagged_columns.tokens_column,
                       c.max_seq_length};
  run.prediction_args = PredictionArgsText(c.task, text, QaFlags{c.qa_features, c.qa_postprocess},
                                           c.trainer.per_device_eval_batch_size);
  if (run.comm->rank() == 0 && !c.trained_args_differences.empty()) {
    std::printf("%s\n", c.trained_args_differences.c_str());  // a note, not an error: stdout
  }
  if (run.comm->rank() == 0 && !c.embedded_training_args.empty()) {
    std::fprintf(stderr, "embedded default run: %s (from recipes/data/%s/training_args.json; "
                 "flags on the command line override them)\n",
                 absl::StrJoin(c.embedded_training_args, " ").c_str(), EmbeddedExampleName(c.task).c_str());
  }
  return absl::OkStatus();
}

// Writes the model as a Hugging Face directory, with copies of the tokenizer files and the
// settings its predictions depend on (prediction_args.json) beside it; returns the names of the
// files written (they go into the directory's manifest.json).
absl::StatusOr<std::vector<std::string>> SaveModel(const models::EncoderModel& model, const PreparedRun& run,
                                                   const std::string& directory) {
  XLMR_RETURN_IF_ERROR(models::SavePretrained(model, directory));
  std::vector<std::string> written = {"config.json", "model.safetensors"};
  for (const TokenizerFile& file : run.tokenizer_files) {
    XLMR_RETURN_IF_ERROR(io::WriteFileDurably(directory + "/" + file.name, file.bytes));
    written.push_back(file.name);
  }
  XLMR_RETURN_IF_ERROR(io::WriteFileDurably(directory + "/" + kPredictionArgsFileName, run.prediction_args));
  written.push_back(kPredictionArgsFileName);
  if (model.config().task == models::Task::kCrossEncoder) {
    XLMR_ASSIGN_OR_RETURN(const std::vector<std::string> files, WriteCrossEncoderFiles(directory));
    written.insert(written.end(), files.begin(), files.end());
  }
  if (model.config().task == models::Task::kSentenceEmbedding) {
    XLMR_ASSIGN_OR_RETURN(const std::vector<std::string> modules,
                          WriteSentenceTransformersFiles(directory, model.config(), run.config.max_seq_length));
    written.insert(written.end(), modules.begin(), modules.end());
  }
  return written;
}

// --load_best_model_at_end: the weights of a checkpoint of this run (same config and labels)
// into `model`'s fp32 masters, and its half working copy refreshed.
absl::Status LoadWeights(models::EncoderModel& model, const PreparedRun& run, const std::string& directory) {
  XLMR_RETURN_IF_ERROR(CheckModelDir(directory));
  models::LoadOptions options;
  options.labels = run.data->labels.id2label();
  options.task = run.config.task;
  options.seed = run.config.trainer.seed;
  options.device = run.config.trainer.device;
  options.dropout = run.config.dropout;
  options.attention = run.config.attention;
  options.pooling = run.config.embedding.pooling;
  options.normalize_embeddings = run.config.embedding.normalize;
  XLMR_ASSIGN_OR_RETURN(models::LoadedModel loaded, models::LoadPretrained(directory, options));
  if (loaded.fresh_head) return absl::DataLossError(absl::StrCat(directory, ": not a checkpoint of this model"));
  ParameterStore& store = model.parameters();
  const Tensor& source = loaded.model->parameters().master();
  if (source.numel() != store.master().numel()) {
    return absl::DataLossError(absl::StrCat(directory, ": its parameters do not match the model's"));
  }
  CopyBytes(store.master().raw_data(), store.master().device(), source.raw_data(), source.device(), source.bytes());
  if (store.half_dtype() != DType::kF32) store.RefreshHalfCopy();
  return absl::OkStatus();
}

// run_qa's prefix of a split's prediction files: its evaluation writes eval_predictions.json,
// its prediction of the test data predict_predictions.json (and nbest_, null_odds likewise).
std::string QaPredictionFilePrefix(const std::string& split) { return split == "test" ? "predict_" : "eval_"; }

// The other tasks: the Trainer's own evaluation, and for the test data the per-row predictions
// (predict_predictions.jsonl: recipes/test_predictions.h), which the Trainer writes for the
// final evaluation only, on rank 0.
train::EvaluateFn RowPredictionEvaluation(PreparedRun& run) {
  return [&run](const data::TokenizedDataset& data, const std::string& split) {
    const train::TrainerOptions& t = run.config.trainer;
    const train::EvalSettings settings = train::EvalSettingsFor(t);
    train::EvalResult result = train::Evaluate(*run.model, data, t.label_names, *run.comm, settings);
    if (split == "test") {
      const TestPredictionSource source{&data, t.label_names, settings, run.config.test_file,
                                        run.config.tagged_columns};
      result.write_files = [&run, source](const std::string& directory) {
        return WriteTestPredictions(*run.model, source, directory);
      };
    }
    return result;
  };
}

// Question answering: each evaluation post-processes the windows' logits into answers and
// scores them (train::EvaluateQa), and keeps the answers for run_qa's prediction files, which
// the Trainer writes for the final evaluations only; other tasks: RowPredictionEvaluation.
train::EvaluateFn TaskEvaluation(PreparedRun& run) {
  if (run.config.task == models::Task::kSentenceEmbedding) {
    return [&run](const data::TokenizedDataset& rows, const std::string&) {
      const train::TrainerOptions& t = run.config.trainer;
      const float scale = static_cast<float>(t.similarity_scale);
      if (t.objective == train::Objective::kScoredPairs) {
        return train::EvaluateScoredPairs(*run.model, rows, scale, *run.comm, train::EvalSettingsFor(t));
      }
      return train::EvaluateInBatchNegatives(*run.model, rows, t.columns_per_row, scale,
                                             train::InBatchDirections(t.objective), *run.comm,
                                             train::EvalSettingsFor(t));
    };
  }
  if (run.config.task != models::Task::kQuestionAnswering) return RowPredictionEvaluation(run);
  return [&run](const data::TokenizedDataset& windows, const std::string& split) {
    const QaSplit& qa = split == "test" ? *run.data->qa_test : *run.data->qa_eval;
    const train::TrainerOptions& t = run.config.trainer;
    train::EvalSettings settings{t.per_device_eval_batch_size, t.autocast, t.pad_id, t.device,
                                 train::Objective::kSpanStartEnd, 0.0};
    settings.segment_separator_id = t.segment_separator_id;
    train::QaEvalResult evaluated = train::EvaluateQa(*run.model, {&qa.examples, &qa.windows, &windows}, *run.comm,
                                                      settings, run.config.qa_postprocess);
    auto predictions = std::make_shared<const std::vector<train::QaPrediction>>(std::move(evaluated.predictions));
    evaluated.result.write_files = [predictions, prefix = QaPredictionFilePrefix(split)](const std::string& dir) {
      return train::WriteQaPredictionFiles(dir, prefix, *predictions);
    };
    return evaluated.result;
  };
}

int Main(const std::set<std::string>& given) {
  PreparedRun run;
  const absl::Status prepared = Prepare(given, run);
  if (run.comm == nullptr) {  // before the ranks could talk: flags, launcher, MPI start-up
    std::fprintf(stderr, "xlmr_finetune: %s\n", std::string(prepared.message()).c_str());
    return 2;
  }
  // Every rank learns whether all are ready, so none waits in a collective for a rank that
  // stopped; each distinct error is printed once, by a rank that hit it.
  const distributed::AgreedOutcome outcome = distributed::AgreeOnOutcome(*run.comm, prepared);
  if (!outcome.all_ok) {
    if (!outcome.report.empty()) std::fprintf(stderr, "xlmr_finetune: %s\n", outcome.report.c_str());
    return 2;
  }
  if (run.config.print_memory_plan) return 0;  // Prepare printed the memory/recompute curve
  const models::EncoderModel& model = *run.model;
  train::Trainer trainer(*run.model, run.data->train, run.data->eval ? &*run.data->eval : nullptr,
                         run.data->test ? &*run.data->test : nullptr, run.config.trainer, *run.comm,
                         [&](const std::string& dir) { return SaveModel(model, run, dir); },
                         [&](const std::string& dir) { return LoadWeights(*run.model, run, dir); },
                         TaskEvaluation(run));
  const OutputDirStart start = DescribeStart(run.output_plan, run.config.trainer.output_dir, trainer.total_steps());
  for (const std::string& line : start.lines) {
    if (run.comm->rank() == 0) std::fprintf(stderr, "%s\n", line.c_str());
  }
  if (start.nothing_left_to_do) return 0;
  // From here a SIGTERM or SIGINT saves a checkpoint and stops (before, there is nothing to save).
  train::InstallStopSignalHandlers();
  const absl::Status status = trainer.Train();
  if (trainer.stopped_by_signal() != 0) {  // every rank stopped at the same step
    if (run.comm->rank() == 0) std::fprintf(stderr, "xlmr_finetune: %s\n", std::string(status.message()).c_str());
    return 128 + trainer.stopped_by_signal();  // the shell's status for a process a signal ended
  }
  if (!status.ok()) {
    const bool several = run.comm->world_size() > 1;
    std::fprintf(stderr, "xlmr_finetune: %s%s\n",
                 several ? absl::StrCat("rank ", run.comm->rank(), ": ").c_str() : "",
                 std::string(status.message()).c_str());
    // The other ranks may be waiting in a collective this rank will never join: stop the job.
    if (several) run.comm->Abort(1);
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace xlmr::recipes

int main(int argc, char** argv) {
  // Before anything else: may restart the process with OpenBLAS kernels that use this CPU's
  // vectors (kernels/cpu/gemm_core_choice.h).
  xlmr::ops::RestartWithWiderCpuGemmKernelsIfNeeded(argv);
  xlmr::recipes::ConfigureUsage(argv[0], kUsage);
  // A bad flag: one line and exit status 2 (Abseil would print several and exit 1); --help and
  // --version: Abseil's text and exit status 0. Flagfiles and --fromenv are expanded and checked.
  std::vector<std::string> arguments;
  if (const std::optional<int> status = xlmr::recipes::ParseCommandLineOrStop(argc, argv, "xlmr_finetune", &arguments)) {
    return *status;
  }
  xlmr::recipes::SetProgramPath(argv[0]);
  return xlmr::recipes::Main(xlmr::recipes::FlagsGiven(arguments));
}
