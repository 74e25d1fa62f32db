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
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/data/record_reader.h"
#include "framework/data/tagged_sentence_reader.h"
#include "framework/data/word_labels.h"
#include "framework/train/evaluate.h"
#include "models/xlmr/hf_checkpoint.h"
#include "recipes/command_line.h"
#include "recipes/device_choice.h"
#include "recipes/predict_writer.h"
#include "recipes/runfiles.h"
#include "recipes/tokenize_fn.h"


ABSL_FLAG(std::string, model_dir, "", "fine-tuned Hugging Face model directory (config.json, "
          "model.safetensors, sentencepiece.bpe.model), e.g. xlmr_finetune's --output_dir");
ABSL_FLAG(std::string, input_file, "", "rows to predict (.tsv, .csv, .jsonl; token classification: .conll, "
          ".txt, .jsonl sentences); labels are ignored");
ABSL_FLAG(std::string, output_file, "", "JSON lines: index, label, logits, probabilities (regression: "
          "prediction; token classification: words, labels)");
ABSL_FLAG(std::string, tokens_column, "tokens", "token classification, .jsonl input: the field holding the words");
ABSL_FLAG(std::string, text_column, "text", "column holding the text");
ABSL_FLAG(std::string, text_pair_column, "", "column holding the second text of a pair (none by default)");
ABSL_FLAG(int, max_seq_length, 128, "tokens per example, special tokens included (use the training value)");
ABSL_FLAG(int64_t, per_device_eval_batch_size, 32, "examples per forward pass");
ABSL_FLAG(bool, fp16, false, "fp16 matrix products with fp32 accumulation, as in fp16 evaluation");
ABSL_FLAG(bool, bf16, false, "bf16 matrix products with fp32 accumulation, as in bf16 evaluation (not with --fp16)");
ABSL_FLAG(std::string, device, "auto", "auto | cpu | cuda (cuda once every op has a CUDA kernel)");

namespace xlmr::recipes {
namespace {

struct PredictConfig {
  std::string model_dir, input_file, output_file;  // resolved paths
  data::ColumnSpec columns;
  data::WordTagColumns tagged_columns;
  int max_seq_length = 128;
  train::EvalSettings eval;
};

absl::Status Expect(bool ok, const char* flag, const std::string& expected, const std::string& got) {
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": expected ", expected, ", got '", got, "'"));
}

absl::StatusOr<PredictConfig> ReadPredictFlags() {
  PredictConfig c;
  c.model_dir = UserPath(absl::GetFlag(FLAGS_model_dir));
  c.input_file = UserPath(absl::GetFlag(FLAGS_input_file));
  c.output_file = UserPath(absl::GetFlag(FLAGS_output_file));
  XLMR_RETURN_IF_ERROR(Expect(!c.model_dir.empty(), "model_dir", "a fine-tuned model directory", ""));
  XLMR_RETURN_IF_ERROR(Expect(!c.input_file.empty(), "input_file", "a .tsv, .csv or .jsonl file", ""));
  XLMR_RETURN_IF_ERROR(Expect(!c.output_file.empty(), "output_file", "a file to write", ""));
  c.tagged_columns.tokens_column = absl::GetFlag(FLAGS_tokens_column);
  XLMR_RETURN_IF_ERROR(Expect(!c.tagged_columns.tokens_column.empty(), "tokens_column", "a field name", ""));
  c.columns.text_column = absl::GetFlag(FLAGS_text_column);
  XLMR_RETURN_IF_ERROR(Expect(!c.columns.text_column.empty(), "text_column", "a column name", ""));
  if (!absl::GetFlag(FLAGS_text_pair_column).empty()) {
    c.columns.text_pair_column = absl::GetFlag(FLAGS_text_pair_column);
  }
  c.max_seq_length = absl::GetFlag(FLAGS_max_seq_length);
  const int min_length = c.columns.text_pair_column.has_value() ? 5 : 3;
  XLMR_RETURN_IF_ERROR(Expect(c.max_seq_length >= min_length, "max_seq_length",
                              absl::StrCat("at least ", min_length, " (special tokens + 1)"),
                              absl::StrCat(c.max_seq_length)));
  c.eval.batch_size = absl::GetFlag(FLAGS_per_device_eval_batch_size);
  XLMR_RETURN_IF_ERROR(Expect(c.eval.batch_size > 0, "per_device_eval_batch_size", "a positive number",
                              absl::StrCat(c.eval.batch_size)));
  if (absl::GetFlag(FLAGS_fp16) && absl::GetFlag(FLAGS_bf16)) {
    return absl::InvalidArgumentError("--fp16 and --bf16: expected at most one autocast dtype, got both");
  }
  c.eval.autocast = train::AutocastDType(absl::GetFlag(FLAGS_fp16), absl::GetFlag(FLAGS_bf16));
  XLMR_ASSIGN_OR_RETURN(const DeviceChoice device, ParseDeviceChoice(absl::GetFlag(FLAGS_device)));
  XLMR_ASSIGN_OR_RETURN(c.eval.device, ChooseDevice(device, /*gpu_ordinal=*/0, /*warn=*/true, "xlmr_predict"));
  return c;
}

// The directory's model with its trained head and its own labels; a directory without a
// head (e.g. the hub's backbone-only xlm-roberta-base) cannot classify anything.
absl::StatusOr<std::unique_ptr<models::XlmrTaskModel>> LoadClassifier(const PredictConfig& c) {
  if (!std::filesystem::exists(c.model_dir + "/config.json")) {
    return absl::NotFoundError(absl::StrCat("--model_dir=", c.model_dir, ": expected a Hugging Face model "
                                            "directory (config.json, model.safetensors, ", kTokenizerFileName, ")"));
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
  const int64_t max_positions = model_config.max_position_embeddings - model_config.pad_token_id - 1;
  XLMR_RETURN_IF_ERROR(Expect(c.max_seq_length <= max_positions, "max_seq_length",
                              absl::StrCat("at most ", max_positions, " (max_position_embeddings of ",
                                           c.model_dir, "/config.json)"),
                              absl::StrCat(c.max_seq_length)));
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
  absl::SetProgramUsageMessage("Predicts the rows of a data file with a fine-tuned XLM-RoBERTa model.");
  // Abseil would exit with status 1 and several lines on a bad flag: one line and 2 instead.
  // Flagfiles and --fromenv are expanded and checked too; Abseil parses the expanded list.
  absl::StatusOr<std::vector<std::string>> arguments = xlmr::recipes::CheckCommandLine(argc, argv);
  if (!arguments.ok()) {
    std::fprintf(stderr, "xlmr_predict: %s\n", std::string(arguments.status().message()).c_str());
    return 2;
  }
  xlmr::recipes::ParseCheckedCommandLine(argv[0], std::move(*arguments));
  xlmr::recipes::SetProgramPath(argv[0]);
  return xlmr::recipes::Main();
}
