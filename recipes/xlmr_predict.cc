// xlmr_predict: predicts every row of a data file (every sentence, for token classification;
// every question, for question answering) with a fine-tuned model directory of any family, whose
// config.json says the task (docs/CONTRACT.md).
//
//   bazel run //recipes:xlmr_predict -- --model_dir=xlmr_finetune_out --input_file=test.tsv
//       --output_file=predictions.jsonl   (one command line)
//   bazel run //recipes:xlmr_predict -- --model_dir=qa_out --input_file=dev.json --output_dir=answers
//
// Output: one JSON line per input row (predict_writer.h); question answering: run_qa's files
// in --output_dir (qa_predict.h), which that task takes instead of --output_file. The input's
// labels (tags), when it has them, are ignored; question answering scores its answers against
// them when every question has some. Token classification reads .conll/.txt/.jsonl sentences
// (framework/data/tagged_sentence_reader.h); question answering SQuAD .json or .jsonl
// (recipes/qa_file.h); the other tasks .tsv/.csv/.jsonl rows. The text is tokenized exactly as
// xlmr_finetune does (same tokenizer function, same --max_seq_length rule, question answering's
// same windows), and the forward pass is the evaluation's. The settings the training run
// recorded in the model directory (prediction_args.json: --max_seq_length, the columns, question
// answering's flags; recipes/prediction_args.h) are the defaults of those flags; a flag given on
// the command line wins, with one stdout line when it differs from the training run's.
//
// Exit status: 0 done; 2 a flag or file was invalid (one line says which; no output file or
// directory is written); 1 the output could not be written after the predictions were computed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "framework/core/status_macros.h"
#include "framework/data/record_reader.h"
#include "framework/data/tagged_sentence_reader.h"
#include "framework/data/word_labels.h"
#include "framework/ops/cpu_gemm_library.h"
#include "framework/profile/profiler.h"
#include "framework/profile/window_recorder.h"
#include "framework/train/evaluate.h"
#include "models/model_tokenizer.h"
#include "models/encoder/hf_checkpoint.h"
#include "recipes/command_line.h"
#include "recipes/common_flags.h"
#include "recipes/device_choice.h"
#include "recipes/embedded_default.h"
#include "recipes/embedding_predict.h"
#include "recipes/npy_writer.h"
#include "recipes/predict_writer.h"
#include "recipes/profile_flags.h"
#include "recipes/prediction_args.h"
#include "recipes/program_usage.h"
#include "recipes/qa_predict.h"
#include "recipes/runfiles.h"
#include "recipes/cross_encoder_files.h"
#include "recipes/sentence_transformers_files.h"
#include "recipes/tokenize_fn.h"


// xlmr_predict's own flags; those it shares with xlmr_finetune (--model_dir, the text columns,
// --max_seq_length, --per_device_eval_batch_size, --fp16, --bf16, --device, question answering's
// --doc_stride, --n_best_size, --max_answer_length, --version_2_with_negative,
// --null_score_diff_threshold) are common_flags.cc's.
ABSL_FLAG(std::string, input_file, "", "rows to predict (.tsv, .csv, .jsonl; token classification: .conll, "
          ".txt, .jsonl sentences; question answering: SQuAD .json or .jsonl, answers optional)");
ABSL_FLAG(std::string, output_file, "", "JSON lines: index, label, logits, probabilities (regression: "
          "prediction; token classification: words, labels); not for question answering (--output_dir)");
ABSL_FLAG(std::string, output_dir, "", "question answering only (instead of --output_file): the directory, "
          "made if missing, for predictions.json, nbest_predictions.json, null_odds.json (v2) and "
          "predict_results.json (when every question has answers to score against)");

namespace {

// What --help prints before the flags.
constexpr char kUsage[] =
    "predicts every row (token classification: every sentence; question answering: every question) of a data "
    "file with a fine-tuned model directory (XLM-RoBERTa, RoBERTa, CamemBERT or BERT), whose config.json says the "
    "task; one JSON line per row, "
    "or run_qa's prediction files for question answering (docs/CONTRACT.md).\n\n"
    "  xlmr_predict --model_dir=DIR --input_file=FILE --output_file=FILE [flags]\n"
    "  xlmr_predict --model_dir=QA_DIR --input_file=FILE.json --output_dir=DIR [flags]\n\n"
    "Exit status: 0 done; 2 a flag or file was invalid (no output file); 1 the output could not be written.";

}  // namespace

namespace xlmr::recipes {
namespace {

struct PredictConfig {
  std::string model_dir, input_file, output_file, output_dir;  // resolved paths
  data::ColumnSpec columns;
  data::WordTagColumns tagged_columns;
  TextFlags text;
  int max_seq_length = 128;
  train::EvalSettings eval;
  profile::ProfileWindow profile;  // --profile_steps: prediction batches
};

// Where --profile_steps writes: <output_dir>/profile for question answering, else a folder
// "profile" beside --output_file.
std::string ProfileDirectory(const std::string& output) {
  const std::filesystem::path parent = std::filesystem::path(output).parent_path();
  return (parent.empty() ? std::filesystem::path("profile") : parent / "profile").string();
}

void PrintLine(const std::string& line) { std::fprintf(stderr, "xlmr_predict: %s\n", line.c_str()); }

// The flags of every task (the recorded settings of `model_dir` already applied:
// ApplyTrainedSettings); the output flags are checked once the task is known (CheckOutputFlags).
absl::StatusOr<PredictConfig> ReadPredictFlags(const std::string& model_dir) {
  PredictConfig c;
  c.model_dir = model_dir;
  c.input_file = UserPath(absl::GetFlag(FLAGS_input_file));
  c.output_file = UserPath(absl::GetFlag(FLAGS_output_file));
  c.output_dir = UserPath(absl::GetFlag(FLAGS_output_dir));
  XLMR_RETURN_IF_ERROR(ExpectFlag(!c.input_file.empty(), "input_file", "a data file (.tsv, .csv, .jsonl; question answering .json, .jsonl)", c.input_file));
  XLMR_ASSIGN_OR_RETURN(c.text, ReadTextFlags());
  c.columns.text_column = c.text.text_column;
  c.columns.text_pair_column = c.text.text_pair_column;
  c.tagged_columns.tokens_column = c.text.tokens_column;
  c.max_seq_length = c.text.max_seq_length;
  XLMR_ASSIGN_OR_RETURN(c.eval.batch_size, ReadEvalBatchSizeFlag());
  XLMR_ASSIGN_OR_RETURN(c.eval.autocast, ReadAutocastFlag());
  XLMR_ASSIGN_OR_RETURN(const DeviceChoice device, ReadDeviceFlag());
  XLMR_ASSIGN_OR_RETURN(c.eval.device, ChooseDevice(device, /*gpu_ordinal=*/0, /*warn=*/true, "xlmr_predict"));
  XLMR_ASSIGN_OR_RETURN(const ops::GpuGemmAlgorithms gemm_algorithms, ReadGemmAlgorithmsFlag());
  ops::UseGpuGemmAlgorithms(gemm_algorithms);
  XLMR_ASSIGN_OR_RETURN(c.profile, ReadProfileStepsFlag());
  return c;
}

// --model_dir's config.json, read before its weights: the task it names decides which flags apply.
absl::StatusOr<models::EncoderConfig> ReadModelConfig(const std::string& model_dir) {
  XLMR_RETURN_IF_ERROR(ExpectFlag(!model_dir.empty(), "model_dir", "a fine-tuned model directory", model_dir));
  XLMR_RETURN_IF_ERROR(CheckModelDir(model_dir));
  XLMR_ASSIGN_OR_RETURN(models::EncoderConfig config, models::LoadEncoderConfig(model_dir + "/config.json"));
  config.task = TaskOfModelDirectory(model_dir, config.task);  // a cross-encoder's config.json reads as regression
  return config;
}

// The settings `model_dir`'s training run recorded (prediction_args.h) become the values of the
// flags the command line does not give, and `set_flags` (FlagsGiven's) gains them: question
// answering's --max_seq_length default of 384 is for a value neither sets. A given flag that
// differs from the recorded value wins, and one stdout line says so (it is not an error).
absl::Status ApplyTrainedSettings(const std::string& model_dir, const models::EncoderConfig& model_config,
                                  std::set<std::string>& set_flags) {
  XLMR_ASSIGN_OR_RETURN(const std::optional<RecordedPredictionArgs> recorded,
                        ReadPredictionArgs(model_dir, model_config));
  if (!recorded.has_value()) return absl::OkStatus();  // the hub's, or an older run's: the flags' defaults
  XLMR_ASSIGN_OR_RETURN(const AppliedPredictionArgs applied, ApplyPredictionArgs(*recorded, set_flags, "xlmr_predict"));
  set_flags.insert(applied.applied.begin(), applied.applied.end());
  if (!applied.differences.empty()) std::printf("%s\n", applied.differences.c_str());
  return absl::OkStatus();
}

// Question answering writes run_qa's files into a directory (--output_dir), the other tasks one
// file (--output_file); each refuses the other's flag rather than ignore it.
absl::Status CheckOutputFlags(const PredictConfig& c, models::Task task) {
  if (task != models::Task::kQuestionAnswering) {
    XLMR_RETURN_IF_ERROR(ExpectFlag(c.output_dir.empty(), "output_dir",
                                    absl::StrCat("none with a ", models::TaskName(task), " model (only question "
                                                 "answering writes a directory; use --output_file)"),
                                    c.output_dir));
    return ExpectFlag(!c.output_file.empty(), "output_file", "a file to write", c.output_file);
  }
  XLMR_RETURN_IF_ERROR(ExpectFlag(c.output_file.empty(), "output_file",
                                  "none with a question-answering model (it writes run_qa's prediction files "
                                  "into --output_dir)", c.output_file));
  XLMR_RETURN_IF_ERROR(ExpectFlag(!c.output_dir.empty(), "output_dir",
                                  "a directory for the prediction files of a question-answering model", c.output_dir));
  std::error_code error;
  const bool usable = !std::filesystem::exists(c.output_dir, error) || std::filesystem::is_directory(c.output_dir, error);
  return ExpectFlag(usable, "output_dir", "a directory (or a path where one can be made)", c.output_dir);
}

// The directory's model with its trained head and its own labels; a directory without a
// head (e.g. the hub's backbone-only xlm-roberta-base) cannot predict anything.
absl::StatusOr<std::unique_ptr<models::EncoderModel>> LoadTrainedModel(
    const PredictConfig& c, models::SentencePooling pooling = models::SentencePooling::kMean) {
  models::LoadOptions options;  // labels unset: keep the directory's id2label
  options.device = c.eval.device;
  if (TaskOfModelDirectory(c.model_dir, models::Task::kRegression) == models::Task::kCrossEncoder) {
    options.task = models::Task::kCrossEncoder;
  }
  options.pooling = pooling;
  XLMR_ASSIGN_OR_RETURN(models::LoadedModel loaded, models::LoadPretrained(c.model_dir, options));
  if (loaded.fresh_head) {
    return absl::FailedPreconditionError(absl::StrCat("--model_dir=", c.model_dir, ": has no trained task head; "
                                                      "fine-tune it first (xlmr_finetune --model_dir=...)"));
  }
  // fp16/bf16 matrix products read the weights' half working copy, as during training.
  if (c.eval.autocast != DType::kF32) loaded.model->parameters().EnableHalfCopy(c.eval.autocast);
  return std::move(loaded.model);
}

// --model_dir's tokenizer, of the family its config.json's model_type names.
absl::StatusOr<models::ModelTokenizer> LoadTokenizer(const PredictConfig& c, const models::EncoderConfig& model_config) {
  return models::LoadModelTokenizer(c.model_dir, model_config);
}

// Reads and tokenizes --input_file with the model directory's tokenizer; token classification
// keeps the sentences read in `sentences` (the output names their words). Sets
// *segment_separator_id to the tokenizer's (TextTokenizer::segment_separator_id).
absl::StatusOr<data::TokenizedDataset> ReadInputs(const PredictConfig& c, const models::EncoderConfig& model_config,
                                                  std::vector<data::TaggedSentence>* sentences,
                                                  int32_t* segment_separator_id) {
  XLMR_RETURN_IF_ERROR(CheckMaxSeqLengthFits(c.max_seq_length, model_config, c.model_dir + "/config.json"));
  XLMR_ASSIGN_OR_RETURN(const models::ModelTokenizer loaded, LoadTokenizer(c, model_config));
  const models::TextTokenizer& tokenizer = *loaded.tokenizer;
  *segment_separator_id = tokenizer.segment_separator_id();
  if (model_config.task == models::Task::kTokenClassification) {
    XLMR_ASSIGN_OR_RETURN(*sentences, data::ReadTaggedSentences(c.input_file, c.tagged_columns, /*require_tags=*/false));
    return data::TokenizedDataset::FromColumns(
        c.input_file, data::TokenizeTaggedSentences(*sentences, MakeTokenizeWordsFn(tokenizer, c.max_seq_length)));
  }
  XLMR_ASSIGN_OR_RETURN(const std::vector<data::Record> records,
                        data::ReadRecords(c.input_file, c.columns, /*require_label=*/false));
  return data::TokenizedDataset::FromColumns(
      c.input_file, data::TokenizeRecords(records, c.max_seq_length, MakeTokenizeFn(tokenizer, c.max_seq_length)));
}

// Everything a row-per-line prediction builds before predicting; building it is where user
// input is validated.
struct PreparedPrediction {
  PredictConfig config;
  std::unique_ptr<models::EncoderModel> model;
  std::optional<data::TokenizedDataset> inputs;
  std::vector<data::TaggedSentence> sentences;  // token classification's input
  std::optional<PredictionWriter> writer;
};

absl::StatusOr<PreparedPrediction> PrepareRows(PredictConfig config) {
  PreparedPrediction run;
  run.config = std::move(config);
  XLMR_ASSIGN_OR_RETURN(run.model, LoadTrainedModel(run.config));
  const models::EncoderConfig& model_config = run.model->config();
  run.config.eval.pad_id = static_cast<int32_t>(model_config.pad_token_id);
  run.config.eval.objective = models::ObjectiveOf(model_config.task);
  XLMR_ASSIGN_OR_RETURN(data::TokenizedDataset inputs, ReadInputs(run.config, model_config, &run.sentences,
                                                                   &run.config.eval.segment_separator_id));
  run.inputs.emplace(std::move(inputs));
  XLMR_ASSIGN_OR_RETURN(PredictionWriter writer, PredictionWriter::Open(run.config.output_file, model_config.id2label,
                                                                        run.config.eval.objective));
  run.writer.emplace(std::move(writer));
  return run;
}

// Predicts one batch at a time and writes it at once, so memory does not grow with the file.
absl::Status PredictAll(PreparedPrediction& run) {
  const train::EvalSettings& settings = run.config.eval;
  const int64_t rows = run.inputs->size();
  profile::WindowRecorder profiler(run.config.profile, settings.device, ProfileDirectory(run.config.output_file),
                                   "xlmr_predict", PrintLine);
  for (int64_t first = 0; first < rows; first += settings.batch_size) {
    const int64_t end = std::min(rows, first + settings.batch_size);
    const int64_t batch_number = first / settings.batch_size + 1;
    const absl::Span<const data::TaggedSentence> sentences =
        run.sentences.empty() ? absl::Span<const data::TaggedSentence>()
                              : absl::MakeConstSpan(run.sentences).subspan(first, end - first);
    std::optional<profile::StepScope> step = profiler.BeginStep(batch_number);
    std::vector<train::Prediction> predictions = train::Predict(*run.model, *run.inputs, first, end, settings);
    step.reset();
    profiler.EndStep(batch_number);
    XLMR_RETURN_IF_ERROR(run.writer->Write(predictions, sentences));
  }
  XLMR_RETURN_IF_ERROR(profiler.Finish());
  return run.writer->Commit();
}

int Fail(int status, const absl::Status& error) {
  std::fprintf(stderr, "xlmr_predict: %s\n", std::string(error.message()).c_str());
  return status;
}

// Sequence classification, regression, token classification: one JSON line per row.
int PredictRows(PredictConfig config) {
  absl::StatusOr<PreparedPrediction> prepared = PrepareRows(std::move(config));
  if (!prepared.ok()) return Fail(2, prepared.status());
  const auto start = std::chrono::steady_clock::now();
  const absl::Status status = PredictAll(*prepared);
  if (!status.ok()) return Fail(1, status);
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  std::fprintf(stderr, "xlmr_predict: wrote %lld predictions to %s in %.1f s\n",
               static_cast<long long>(prepared->writer->lines_written()), prepared->config.output_file.c_str(),
               seconds.count());
  return 0;
}

// A sentence-embedding model: the embedding of every row of --input_file's --text_column as a
// .npy matrix (embedding_predict.h), with the directory's Pooling and Normalize modules.
int EmbedRows(const PredictConfig& c, const models::EncoderConfig& model_config) {
  if (!absl::EndsWith(c.output_file, ".npy")) {
    return Fail(2, ExpectFlag(false, "output_file", "a .npy file with a sentence-embedding model", c.output_file));
  }
  const absl::StatusOr<SentenceTransformersModules> modules = ReadSentenceTransformersModules(c.model_dir);
  if (!modules.ok()) return Fail(2, modules.status());
  absl::StatusOr<std::unique_ptr<models::EncoderModel>> model = LoadTrainedModel(c, modules->pooling);
  if (!model.ok()) return Fail(2, model.status());
  train::EvalSettings settings = c.eval;
  settings.pad_id = static_cast<int32_t>(model_config.pad_token_id);
  std::vector<data::TaggedSentence> unused;
  absl::StatusOr<data::TokenizedDataset> inputs = ReadInputs(c, model_config, &unused, &settings.segment_separator_id);
  if (!inputs.ok()) return Fail(2, inputs.status());
  absl::StatusOr<NpyMatrixWriter> writer = NpyMatrixWriter::Open(c.output_file, inputs->size(), model_config.hidden_size);
  if (!writer.ok()) return Fail(2, writer.status());
  const auto start = std::chrono::steady_clock::now();
  const absl::Status written = WriteEmbeddings(**model, *inputs, settings, modules->normalize, *writer);
  if (!written.ok()) return Fail(1, written);
  if (const absl::Status committed = writer->Commit(); !committed.ok()) return Fail(1, committed);
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  std::fprintf(stderr, "xlmr_predict: wrote %lld embeddings of %lld values to %s in %.1f s\n",
               static_cast<long long>(writer->rows_written()), static_cast<long long>(model_config.hidden_size),
               c.output_file.c_str(), seconds.count());
  return 0;
}

// Question answering: run_qa's prediction files in --output_dir (qa_predict.h).
int AnswerQuestionsInFile(const PredictConfig& c, const models::EncoderConfig& model_config,
                          const std::set<std::string>& set_flags) {
  QaPredictOptions options;
  options.input_file = c.input_file;
  options.output_dir = c.output_dir;
  options.eval = c.eval;
  options.eval.pad_id = static_cast<int32_t>(model_config.pad_token_id);
  absl::StatusOr<QaFlags> qa = ReadQuestionAnsweringFlags(c.text, set_flags.count("max_seq_length") > 0);
  if (!qa.ok()) return Fail(2, qa.status());
  options.qa = *std::move(qa);
  const absl::Status fits =
      CheckMaxSeqLengthFits(options.qa.features.max_seq_length, model_config, c.model_dir + "/config.json");
  if (!fits.ok()) return Fail(2, fits);
  absl::StatusOr<std::unique_ptr<models::EncoderModel>> model = LoadTrainedModel(c);
  if (!model.ok()) return Fail(2, model.status());
  absl::StatusOr<models::ModelTokenizer> tokenizer = LoadTokenizer(c, model_config);
  if (!tokenizer.ok()) return Fail(2, tokenizer.status());
  options.eval.segment_separator_id = (*tokenizer->tokenizer).segment_separator_id();
  absl::StatusOr<QaFile> input = ReadQaInput(options, *tokenizer->tokenizer);
  if (!input.ok()) return Fail(2, input.status());

  profile::WindowRecorder profiler(c.profile, c.eval.device, c.output_dir + "/profile", "xlmr_predict", PrintLine);
  options.eval.profiler = &profiler;
  const auto start = std::chrono::steady_clock::now();
  const absl::StatusOr<QaPredictSummary> summary = AnswerQuestions(**model, *input, options);
  if (!summary.ok()) return Fail(1, summary.status());
  if (const absl::Status written = profiler.Finish(); !written.ok()) return Fail(1, written);
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  std::fprintf(stderr, "xlmr_predict: answered %lld questions (%zu windows) in %.1f s; wrote %s to %s\n",
               static_cast<long long>(summary->questions), input->windows.size(), seconds.count(),
               absl::StrJoin(summary->files, ", ").c_str(), c.output_dir.c_str());
  if (!summary->figures.empty()) {
    std::string figures;
    for (const auto& [name, value] : summary->figures) absl::StrAppendFormat(&figures, "%s%s %.4f", figures.empty() ? "" : ", ", name, value);
    std::fprintf(stderr, "xlmr_predict: %s\n", figures.c_str());
  }
  return 0;
}

int Main(const std::set<std::string>& given) {
  // The model directory first: what its training run recorded is the default of the flags read next.
  const std::string model_dir = ModelDirFlag();
  const absl::StatusOr<models::EncoderConfig> model_config = ReadModelConfig(model_dir);
  if (!model_config.ok()) return Fail(2, model_config.status());
  std::set<std::string> set_flags = given;
  const absl::Status trained = ApplyTrainedSettings(model_dir, *model_config, set_flags);
  if (!trained.ok()) return Fail(2, trained);
  absl::StatusOr<PredictConfig> config = ReadPredictFlags(model_dir);
  if (!config.ok()) return Fail(2, config.status());
  const absl::Status outputs = CheckOutputFlags(*config, model_config->task);
  if (!outputs.ok()) return Fail(2, outputs);
  if (model_config->task == models::Task::kQuestionAnswering) {
    return AnswerQuestionsInFile(*config, *model_config, set_flags);
  }
  if (model_config->task == models::Task::kSentenceEmbedding) return EmbedRows(*config, *model_config);
  return PredictRows(*std::move(config));
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
  if (const std::optional<int> status = xlmr::recipes::ParseCommandLineOrStop(argc, argv, "xlmr_predict", &arguments)) {
    return *status;
  }
  xlmr::recipes::SetProgramPath(argv[0]);
  // Which flags were given decides which of the model's recorded settings apply, and question
  // answering's --max_seq_length default (384).
  return xlmr::recipes::Main(xlmr::recipes::FlagsGiven(arguments));
}
