#include "recipes/common_flags.h"

#include <filesystem>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/io/file_manifest.h"
#include "recipes/runfiles.h"
#include "recipes/tokenize_fn.h"

// The help texts speak for both binaries (--helpfull lists these under this file).
ABSL_FLAG(std::string, model_dir, "", "Hugging Face model directory (config.json, model.safetensors, "
          "sentencepiece.bpe.model). xlmr_finetune: the model to fine-tune (default: the embedded tiny "
          "model, randomly initialised); xlmr_predict: a fine-tuned one, e.g. xlmr_finetune's --output_dir "
          "(required)");
ABSL_FLAG(std::string, text_column, "text", "column holding the text");
ABSL_FLAG(std::string, text_pair_column, "", "column holding the second text of a pair (none by default)");
ABSL_FLAG(std::string, tokens_column, "tokens", "token classification, .jsonl data: the field holding the words");
ABSL_FLAG(int, max_seq_length, 128, "tokens per example, special tokens included (xlmr_predict: use the "
          "training value)");
ABSL_FLAG(int64_t, per_device_eval_batch_size, 32, "examples per evaluation (xlmr_predict: prediction) batch "
          "per process");
ABSL_FLAG(bool, fp16, false, "fp16 autocast: matrix products in fp16 with fp32 accumulation; training keeps "
          "fp32 master weights and scales the loss dynamically (not with --bf16)");
ABSL_FLAG(bool, bf16, false, "bf16 autocast: matrix products in bf16 with fp32 accumulation; training keeps "
          "fp32 master weights, no loss scaling (not with --fp16)");
ABSL_FLAG(std::string, device, "auto", "auto | cpu | cuda (auto: the CPU until the CUDA backend is verified "
          "on a GPU)");

namespace xlmr::recipes {

absl::Status ExpectFlag(bool ok, absl::string_view flag, absl::string_view expected, absl::string_view got) {
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, ": expected ", expected, ", got ", got.empty() ? "''" : got));
}

std::string ModelDirFlag() { return UserPath(absl::GetFlag(FLAGS_model_dir)); }

absl::Status CheckModelDir(const std::string& model_dir) {
  if (!std::filesystem::exists(model_dir + "/config.json")) {
    return absl::NotFoundError(absl::StrCat("--model_dir=", model_dir, ": expected a Hugging Face model "
                                            "directory (config.json, model.safetensors, ", kTokenizerFileName, ")"));
  }
  // A directory we wrote (a final model, a checkpoint) carries a manifest: the files a model
  // load reads must match it. Other directories (the hub's) have none and are read as they are.
  const absl::StatusOr<io::ManifestCheck> verified = io::VerifyManifest(
      model_dir, {"config.json", "model.safetensors", kTokenizerFileName}, io::ManifestScope::kRequiredOnly);
  if (!verified.ok()) return absl::InvalidArgumentError(absl::StrCat("--model_dir=", model_dir, ": ", verified.status().message()));
  return absl::OkStatus();
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

absl::Status CheckMaxSeqLengthFits(int max_seq_length, const models::XlmrConfig& config,
                                   const std::string& config_path) {
  const int64_t max_positions = config.max_sequence_length();
  return ExpectFlag(max_seq_length <= max_positions, "max_seq_length",
                    absl::StrCat("at most ", max_positions, " (max_position_embeddings of ", config_path, ")"),
                    absl::StrCat(max_seq_length));
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

}  // namespace xlmr::recipes
