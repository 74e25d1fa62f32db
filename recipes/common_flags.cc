#include "recipes/common_flags.h"

#include <filesystem>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/io/file_manifest.h"
#include "framework/train/evaluate.h"
#include "recipes/runfiles.h"

// The help texts speak for both binaries (--helpfull lists these under this file).
ABSL_FLAG(std::string, model_dir, "", "Hugging Face model directory (config.json, model.safetensors and the "
          "tokenizer: sentencepiece.bpe.model for model_type xlm-roberta and camembert, vocab.json and merges.txt "
          "for roberta, vocab.txt for bert). "
          "xlmr_finetune: the model to fine-tune (without it: the embedded tiny "
          "model, randomly initialised); xlmr_predict: a fine-tuned one, e.g. xlmr_finetune's --output_dir "
          "(required)");
ABSL_FLAG(std::string, text_column, "text", "column holding the text");
ABSL_FLAG(std::string, text_pair_column, "", "column holding the second text of a pair (none by default)");
ABSL_FLAG(std::string, tokens_column, "tokens", "token classification, .jsonl data: the field holding the words");
ABSL_FLAG(int, max_seq_length, 128, "tokens per example, special tokens included; question answering: per "
          "window, default 384 (xlmr_predict: the value the model recorded, prediction_args.json)");
// The evaluation's own default (train::EvalSettings), which TrainerOptions takes too.
ABSL_FLAG(int64_t, per_device_eval_batch_size, xlmr::train::EvalSettings().batch_size,
          "examples per evaluation (xlmr_predict: prediction) batch per process");
ABSL_FLAG(bool, fp16, false, "fp16 autocast: matrix products in fp16 with fp32 accumulation; training keeps "
          "fp32 master weights and scales the loss dynamically (not with --bf16)");
ABSL_FLAG(bool, bf16, false, "bf16 autocast: matrix products in bf16 with fp32 accumulation; training keeps "
          "fp32 master weights, no loss scaling (not with --fp16)");
ABSL_FLAG(int, doc_stride, 128, "question answering: tokens shared by consecutive windows of a long context");
ABSL_FLAG(int, n_best_size, 20, "question answering: start and end candidates per window, and answers kept");
ABSL_FLAG(int, max_answer_length, 30, "question answering: the longest answer in tokens");
ABSL_FLAG(bool, version_2_with_negative, false, "question answering: some questions have no answer (SQuAD v2)");
ABSL_FLAG(double, null_score_diff_threshold, 0.0, "question answering, v2: answer nothing when the null score "
          "beats the best span's by more than this");
ABSL_FLAG(std::string, gemm_algorithms, "heuristic", "heuristic | measured: how CUDA matrix products pick their "
          "cuBLASLt algorithm (measured: the fastest of the heuristic's candidates, timed once per shape; runs may "
          "then differ in the last bits)");
ABSL_FLAG(std::string, device, "auto", "auto | cpu | cuda (auto: the GPU when one is visible and this "
          "binary's CUDA backend has passed the GPU tests, else the CPU)");

namespace xlmr::recipes {

absl::Status ExpectFlag(bool ok, absl::string_view flag, absl::string_view expected, absl::string_view got) {
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, ": expected ", expected, ", got ", got.empty() ? "''" : got));
}

std::string ModelDirFlag() { return UserPath(absl::GetFlag(FLAGS_model_dir)); }

namespace {

// The manifest check of CheckModelDir for `files` (kNoManifest passes: see there).
absl::Status VerifyAgainstManifest(const std::string& model_dir, const std::vector<std::string>& files) {
  const absl::StatusOr<io::ManifestCheck> verified =
      io::VerifyManifest(model_dir, files, io::ManifestScope::kRequiredOnly);
  if (!verified.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--model_dir=", model_dir, ": ", verified.status().message()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckModelDir(const std::string& model_dir) {
  if (!std::filesystem::exists(model_dir + "/config.json")) {
    return absl::NotFoundError(absl::StrCat("--model_dir=", model_dir, ": expected a Hugging Face model "
                                            "directory (config.json, model.safetensors, the tokenizer's files)"));
  }
  // A directory we wrote (a final model, a checkpoint) carries a manifest: the files a model
  // load reads must match it. Other directories (the hub's) have none and are read as they are.
  // config.json is verified before it is read for the family, whose tokenizer files come next.
  XLMR_RETURN_IF_ERROR(VerifyAgainstManifest(model_dir, {"config.json", "model.safetensors"}));
  XLMR_ASSIGN_OR_RETURN(const models::EncoderConfig config, models::LoadEncoderConfig(model_dir + "/config.json"));
  std::vector<std::string> tokenizer_files = config.family->required_tokenizer_files;
  for (const std::string& name : config.family->optional_tokenizer_files) {
    if (std::filesystem::exists(model_dir + "/" + name)) tokenizer_files.push_back(name);
  }
  return VerifyAgainstManifest(model_dir, tokenizer_files);
}

absl::StatusOr<TextFlags> ReadTextFlags() {
  TextFlags text;
  text.text_column = absl::GetFlag(FLAGS_text_column);
  XLMR_RETURN_IF_ERROR(ExpectFlag(!text.text_column.empty(), "text_column", "a column name", text.text_column));
  if (!absl::GetFlag(FLAGS_text_pair_column).empty()) text.text_pair_column = absl::GetFlag(FLAGS_text_pair_column);
  text.tokens_column = absl::GetFlag(FLAGS_tokens_column);
  XLMR_RETURN_IF_ERROR(ExpectFlag(!text.tokens_column.empty(), "tokens_column", "a field name", text.tokens_column));
  text.max_seq_length = absl::GetFlag(FLAGS_max_seq_length);
  const int min_length = text.text_pair_column.has_value() ? 5 : 3;
  XLMR_RETURN_IF_ERROR(ExpectFlag(text.max_seq_length >= min_length, "max_seq_length",
                                  absl::StrCat("at least ", min_length, " (special tokens + 1)"),
                                  absl::StrCat(text.max_seq_length)));
  return text;
}

absl::Status CheckMaxSeqLengthFits(int max_seq_length, const models::EncoderConfig& config,
                                   const std::string& config_path) {
  const int64_t max_positions = config.max_sequence_length();
  return ExpectFlag(max_seq_length <= max_positions, "max_seq_length",
                    absl::StrCat("at most ", max_positions, " (max_position_embeddings of ", config_path, ")"),
                    absl::StrCat(max_seq_length));
}

absl::StatusOr<QaFlags> ReadQuestionAnsweringFlags(const TextFlags& text, bool max_seq_length_given) {
  QaFlags qa;
  const int max_seq_length = max_seq_length_given ? text.max_seq_length : 384;  // run_qa's default
  XLMR_RETURN_IF_ERROR(ExpectFlag(max_seq_length > 5, "max_seq_length", "more than 5 with question answering",
                                  absl::StrCat(max_seq_length)));
  const int stride = absl::GetFlag(FLAGS_doc_stride);
  XLMR_RETURN_IF_ERROR(ExpectFlag(stride >= 0 && stride < max_seq_length - 5, "doc_stride",
                                  absl::StrCat("a number in [0, max_seq_length - 5 = ", max_seq_length - 5, ")"),
                                  absl::StrCat(stride)));
  qa.features.max_seq_length = max_seq_length;
  qa.features.doc_stride = stride;
  const int n_best_size = absl::GetFlag(FLAGS_n_best_size);
  XLMR_RETURN_IF_ERROR(ExpectFlag(n_best_size > 0, "n_best_size", "a positive number", absl::StrCat(n_best_size)));
  const int max_answer_length = absl::GetFlag(FLAGS_max_answer_length);
  XLMR_RETURN_IF_ERROR(ExpectFlag(max_answer_length > 0, "max_answer_length", "a positive number",
                                  absl::StrCat(max_answer_length)));
  qa.postprocess.n_best_size = n_best_size;
  qa.postprocess.max_answer_length = max_answer_length;
  qa.postprocess.version_2_with_negative = absl::GetFlag(FLAGS_version_2_with_negative);
  qa.postprocess.null_score_diff_threshold = static_cast<float>(absl::GetFlag(FLAGS_null_score_diff_threshold));
  XLMR_RETURN_IF_ERROR(ExpectFlag(!text.text_pair_column.has_value(), "text_pair_column",
                                  "no text pairs with question answering (the data holds question and context)",
                                  text.text_pair_column.value_or("")));
  return qa;
}

absl::StatusOr<int64_t> ReadEvalBatchSizeFlag() {
  const int64_t batch_size = absl::GetFlag(FLAGS_per_device_eval_batch_size);
  XLMR_RETURN_IF_ERROR(
      ExpectFlag(batch_size > 0, "per_device_eval_batch_size", "a positive number", absl::StrCat(batch_size)));
  return batch_size;
}

absl::StatusOr<DType> ReadAutocastFlag() {
  const bool fp16 = absl::GetFlag(FLAGS_fp16);
  const bool bf16 = absl::GetFlag(FLAGS_bf16);
  if (fp16 && bf16) {
    return absl::InvalidArgumentError("--fp16 and --bf16: expected at most one autocast dtype, got both");
  }
  return fp16 ? DType::kF16 : bf16 ? DType::kBF16 : DType::kF32;
}

const char* AutocastName(DType autocast) {
  return autocast == DType::kF16 ? "fp16" : autocast == DType::kBF16 ? "bf16" : "fp32";
}

absl::StatusOr<DeviceChoice> ReadDeviceFlag() { return ParseDeviceChoice(absl::GetFlag(FLAGS_device)); }

absl::StatusOr<ops::GpuGemmAlgorithms> ReadGemmAlgorithmsFlag() {
  const std::string name = absl::GetFlag(FLAGS_gemm_algorithms);
  const std::optional<ops::GpuGemmAlgorithms> algorithms = ops::ParseGpuGemmAlgorithms(name);
  XLMR_RETURN_IF_ERROR(ExpectFlag(algorithms.has_value(), "gemm_algorithms", "heuristic or measured", name));
  return *algorithms;
}

}  // namespace xlmr::recipes
