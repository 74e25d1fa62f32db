// xlmr_predict: predicts every row of a data file (every sentence, for token classification)
// with a fine-tuned XLM-RoBERTa model directory, whose config.json says the task
// (docs/CONTRACT.md).
//
//   bazel run //recipes:xlmr_predict -- --model_dir=xlmr_finetune_out --input_file=test.tsv
//       --output_file=predictions.jsonl   (one command line)
//
// Output: one JSON line per input row (predict_writer.h). The input's labels (tags), when it
// has them, are ignored. Token classification reads .conll/.txt/.jsonl sentences
// (framework/data/tagged_sentence_reader.h); the other tasks .tsv/.csv/.jsonl rows. The text is tokenized exactly as xlmr_finetune does (same tokenizer
// function, same --max_seq_length rule), and the forward pass is the evaluation's.
//
// Exit status: 0 done; 2 a flag or file was invalid (one line says which; no output file is
// written); 1 the output could not be written after the predictions were computed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/data/record_reader.h"
#include "framework/data/tagged_sentence_reader.h"
#include "framework/data/word_labels.h"
#include "framework/train/evaluate.h"
#include "models/xlmr/hf_checkpoint.h"
#include "recipes/command_line.h"
#include "recipes/common_flags.h"
#include "recipes/device_choice.h"
#include "recipes/predict_writer.h"
#include "recipes/program_usage.h"
#include "recipes/runfiles.h"
#include "recipes/tokenize_fn.h"


// xlmr_predict's own flags; those it shares with xlmr_finetune (--model_dir, the text columns,
// --max_seq_length, --per_device_eval_batch_size, --fp16, --bf16, --device) are common_flags.cc's.
ABSL_FLAG(std::string, input_file, "", "rows to predict (.tsv, .csv, .jsonl; token classification: .conll, "
          ".txt, .jsonl sentences); labels are ignored");
ABSL_FLAG(std::string, output_file, "", "JSON lines: index, label, logits, probabilities (regression: "
          "prediction; token classification: words, labels)");

namespace {

// What --help prints before the flags.
constexpr char kUsage[] =
    "predicts every row (token classification: every sentence) of a data file with a fine-tuned XLM-RoBERTa "
    "model directory, whose config.json says the task; one JSON line per row (docs/CONTRACT.md).\n\n"
    "  xlmr_predict --model_dir=DIR --input_file=FILE --output_file=FILE [flags]\n\n"
    "Exit status: 0 done; 2 a flag or file was invalid (no output file); 1 the output could not be written.";

}  // namespace

namespace xlmr::recipes {
namespace {

struct PredictConfig {
  std::string model_dir, input_file, output_file;  // resolved paths
  data::ColumnSpec columns;
  data::WordTagColumns tagged_columns;
  int max_seq_length = 128;
  train::EvalSettings eval;
};

absl::StatusOr<PredictConfig> ReadPredictFlags() {
  PredictConfig c;
  c.model_dir = ModelDirFlag();
  c.input_file = UserPath(absl::GetFlag(FLAGS_input_file));
  c.output_file = UserPath(absl::GetFlag(FLAGS_output_file));
  XLMR_RETURN_IF_ERROR(ExpectFlag(!c.model_dir.empty(), "model_dir", "a fine-tuned model directory", c.model_dir));
  XLMR_RETURN_IF_ERROR(ExpectFlag(!c.input_file.empty(), "input_file", "a .tsv, .csv or .jsonl file", c.input_file));
  XLMR_RETURN_IF_ERROR(ExpectFlag(!c.output_file.empty(), "output_file", "a file to write", c.output_file));
  XLMR_ASSIGN_OR_RETURN(const TextFlags text, ReadTextFlags());
  c.columns.text_column = text.text_column;
  c.columns.text_pair_column = text.text_pair_column;
  c.tagged_columns.tokens_column = text.tokens_column;
  c.max_seq_length = text.max_seq_length;
  XLMR_ASSIGN_OR_RETURN(c.eval.batch_size, ReadEvalBatchSizeFlag());
  XLMR_ASSIGN_OR_RETURN(c.eval.autocast, ReadAutocastFlag());
  XLMR_ASSIGN_OR_RETURN(const DeviceChoice device, ReadDeviceFlag());
  XLMR_ASSIGN_OR_RETURN(c.eval.device, ChooseDevice(device, /*gpu_ordinal=*/0, /*warn=*/true, "xlmr_predict"));
  return c;
}

// The directory's model with its trained head and its own labels; a directory without a
// head (e.g. the hub's backbone-only xlm-roberta-base) cannot classify anything.
absl::StatusOr<std::unique_ptr<models::XlmrTaskModel>> LoadClassifier(const PredictConfig& c) {
  XLMR_RETURN_IF_ERROR(CheckModelDir(c.model_dir));
  // Refused before its weights are read (issue 30: the binaries do not answer questions yet).
  XLMR_ASSIGN_OR_RETURN(const models::XlmrConfig config,
                        models::LoadXlmrConfig(c.model_dir + "/config.json"));
  if (config.task == models::XlmrTask::kQuestionAnswering) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--model_dir=", c.model_dir, ": XLMRobertaForQuestionAnswering; xlmr_predict does not "
        "answer questions yet"));
  }
  models::LoadOptions options;  // labels unset: keep the directory's id2label
  options.device = c.eval.device;
  XLMR_ASSIGN_OR_RETURN(models::LoadedModel loaded, models::LoadPretrained(c.model_dir, options));
  if (loaded.fresh_head) {
    return absl::FailedPreconditionError(absl::StrCat("--model_dir=", c.model_dir, ": has no classification head; "
                                                      "fine-tune it first (xlmr_finetune --model_dir=...)"));
  }

  return std::move(loaded.model);
}

// Reads and tokenizes --input_file with the model directory's tokenizer; token classification
// keeps the sentences read in `sentences` (the output names their words).
absl::StatusOr<data::TokenizedDataset> ReadInputs(const PredictConfig& c, const models::XlmrConfig& model_config,
                                                  std::vector<data::TaggedSentence>* sentences) {
  XLMR_RETURN_IF_ERROR(CheckMaxSeqLengthFits(c.max_seq_length, model_config, c.model_dir + "/config.json"));
  XLMR_ASSIGN_OR_RETURN(const models::XlmrTokenizer tokenizer,
                        models::XlmrTokenizer::Load(c.model_dir + "/" + kTokenizerFileName, model_config.vocab_size));
  if (model_config.task == models::XlmrTask::kTokenClassification) {
    XLMR_ASSIGN_OR_RETURN(*sentences, data::ReadTaggedSentences(c.input_file, c.tagged_columns, /*require_tags=*/false));
    return data::TokenizedDataset::FromColumns(
        c.input_file, data::TokenizeTaggedSentences(*sentences, MakeTokenizeWordsFn(tokenizer, c.max_seq_length)));
  }
  XLMR_ASSIGN_OR_RETURN(const std::vector<data::Record> records,
                        data::ReadRecords(c.input_file, c.columns, /*require_label=*/false));
  return data::TokenizedDataset::FromColumns(
      c.input_file, data::TokenizeRecords(records, c.max_seq_length, MakeTokenizeFn(tokenizer, c.max_seq_length)));
}

// Everything built before predicting starts; building it is where user input is validated.
struct PreparedPrediction {
  PredictConfig config;
  std::unique_ptr<models::XlmrTaskModel> model;
  std::optional<data::TokenizedDataset> inputs;
  std::vector<data::TaggedSentence> sentences;  // token classification's input
  std::optional<PredictionWriter> writer;
};

absl::StatusOr<PreparedPrediction> Prepare() {
  PreparedPrediction run;
  XLMR_ASSIGN_OR_RETURN(run.config, ReadPredictFlags());
  XLMR_ASSIGN_OR_RETURN(run.model, LoadClassifier(run.config));
  // fp16/bf16 matrix products read the weights' half working copy, as during training.
  if (run.config.eval.autocast != DType::kF32) run.model->parameters().EnableHalfCopy(run.config.eval.autocast);
  const models::XlmrConfig& model_config = run.model->config();
  run.config.eval.pad_id = static_cast<int32_t>(model_config.pad_token_id);
  run.config.eval.objective = models::ObjectiveOf(model_config.task);
  XLMR_ASSIGN_OR_RETURN(data::TokenizedDataset inputs, ReadInputs(run.config, model_config, &run.sentences));
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
  for (int64_t first = 0; first < rows; first += settings.batch_size) {
    const int64_t end = std::min(rows, first + settings.batch_size);
    const absl::Span<const data::TaggedSentence> sentences =
        run.sentences.empty() ? absl::Span<const data::TaggedSentence>()
                              : absl::MakeConstSpan(run.sentences).subspan(first, end - first);
    XLMR_RETURN_IF_ERROR(run.writer->Write(train::Predict(*run.model, *run.inputs, first, end, settings), sentences));
  }
  return run.writer->Commit();
}

int Main() {
  absl::StatusOr<PreparedPrediction> prepared = Prepare();
  if (!prepared.ok()) {
    std::fprintf(stderr, "xlmr_predict: %s\n", std::string(prepared.status().message()).c_str());
    return 2;
  }
  const auto start = std::chrono::steady_clock::now();
  const absl::Status status = PredictAll(*prepared);
  if (!status.ok()) {
    std::fprintf(stderr, "xlmr_predict: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
  std::fprintf(stderr, "xlmr_predict: wrote %lld predictions to %s in %.1f s\n",
               static_cast<long long>(prepared->writer->lines_written()), prepared->config.output_file.c_str(),
               seconds.count());
  return 0;
}

}  // namespace
}  // namespace xlmr::recipes

int main(int argc, char** argv) {
  xlmr::recipes::ConfigureUsage(argv[0], kUsage);
  // A bad flag: one line and exit status 2 (Abseil would print several and exit 1); --help and
  // --version: Abseil's text and exit status 0. Flagfiles and --fromenv are expanded and checked.
  if (const std::optional<int> status = xlmr::recipes::ParseCommandLineOrStop(argc, argv, "xlmr_predict", nullptr)) {
    return *status;
  }
  xlmr::recipes::SetProgramPath(argv[0]);
  return xlmr::recipes::Main();
}
