// The flags both binaries take (xlmr_finetune and xlmr_predict; docs/CONTRACT.md), each defined
// once, here, with its checks: a flag means the same in training and in prediction, and its error
// reads the same in both, one line naming the flag (ExpectFlag).
//
//   --model_dir                        a Hugging Face model directory (CheckModelDir)
//   --text_column, --text_pair_column, how rows become token ids, as in training so in
//   --tokens_column, --max_seq_length  prediction (ReadTextFlags, CheckMaxSeqLengthFits)
//   --per_device_eval_batch_size       examples per forward pass of evaluation or prediction
//   --fp16, --bf16                     the autocast dtype, one value from here on (ReadAutocastFlag)
//   --device                           auto | cpu | cuda
//   --gemm_algorithms                  heuristic | measured: CUDA products' cuBLASLt algorithms
//   --doc_stride, --n_best_size,       question answering: run_qa's windows and post-processing
//   --max_answer_length,               (ReadQuestionAnsweringFlags), with --max_seq_length's
//   --version_2_with_negative,         default of 384 for this task
//   --null_score_diff_threshold
//
// xlmr_finetune's other flags are in finetune_flags.cc, xlmr_predict's in xlmr_predict.cc.
#ifndef XLMR_RECIPES_COMMON_FLAGS_H_
#define XLMR_RECIPES_COMMON_FLAGS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/core/device.h"
#include "framework/data/qa_features.h"
#include "framework/ops/gpu_gemm_algorithms.h"
#include "framework/tensor/dtype.h"
#include "framework/train/qa_postprocessing.h"
#include "models/encoder/config.h"

namespace xlmr::recipes {

// The one wording of a bad flag value: unless `ok`, InvalidArgument
// "--<flag>: expected <expected>, got <got>" ('' stands for an empty value).
absl::Status ExpectFlag(bool ok, absl::string_view flag, absl::string_view expected, absl::string_view got);

// --model_dir as the user means it (runfiles.h: UserPath); empty when not given.
std::string ModelDirFlag();

// NotFound naming --model_dir unless `model_dir` holds a config.json; config.json's errors
// (LoadEncoderConfig); InvalidArgument naming the file and what failed when the directory has a
// manifest.json (one we wrote: a final model or a checkpoint) and its config.json,
// model.safetensors or the tokenizer files of its model_type (models/families.h) do not
// match it.
absl::Status CheckModelDir(const std::string& model_dir);

// How text becomes model input; training and prediction must agree on all of it.
struct TextFlags {
  std::string text_column;                      // --text_column
  std::optional<std::string> text_pair_column;  // --text_pair_column; none when empty
  std::string tokens_column;                    // --tokens_column (token classification, .jsonl)
  int max_seq_length = 128;                     // --max_seq_length
};

// The flags above; InvalidArgument naming the flag for an empty column name, or a
// --max_seq_length below 3 (5 with a pair: the special tokens and one token of each text).
absl::StatusOr<TextFlags> ReadTextFlags();

// InvalidArgument naming --max_seq_length when it exceeds the positions of the model whose
// config.json (at `config_path`, named in the message) is `config`.
absl::Status CheckMaxSeqLengthFits(int max_seq_length, const models::EncoderConfig& config,
                                   const std::string& config_path);

// Question answering's flags, as run_qa.py takes them.
struct QaFlags {
  data::QaFeatureOptions features;          // max_seq_length and --doc_stride (token ids: defaults)
  train::QaPostprocessOptions postprocess;  // --n_best_size, --max_answer_length,
                                            // --version_2_with_negative, --null_score_diff_threshold
};

// The flags above for a question-answering model; `text` is ReadTextFlags' result and
// `max_seq_length_given` whether --max_seq_length was on the command line (FlagsGiven): when it
// was not, run_qa's 384 replaces the flag's default. InvalidArgument naming the flag: a
// max_seq_length not above 5, a doc_stride outside [0, max_seq_length - 5) (a window must leave
// the context more tokens than that: qa_features.h), an n_best_size or max_answer_length not
// positive, a --text_pair_column (the data holds question and context).
absl::StatusOr<QaFlags> ReadQuestionAnsweringFlags(const TextFlags& text, bool max_seq_length_given);

// --per_device_eval_batch_size; InvalidArgument unless positive.
absl::StatusOr<int64_t> ReadEvalBatchSizeFlag();

// --fp16 / --bf16 as the run's one autocast dtype: kF16, kBF16, or kF32 (neither: autocast
// off). The only place the pair is read; both given is InvalidArgument naming both.
absl::StatusOr<DType> ReadAutocastFlag();

// The flag's name for an autocast dtype, as messages and reports print it: "fp16", "bf16";
// "fp32" for kF32.
const char* AutocastName(DType autocast);

// --device.
absl::StatusOr<DeviceChoice> ReadDeviceFlag();

// --gemm_algorithms [heuristic]; InvalidArgument naming the flag for anything but heuristic or
// measured. The binaries apply it (ops::UseGpuGemmAlgorithms) once the device is chosen.
absl::StatusOr<ops::GpuGemmAlgorithms> ReadGemmAlgorithmsFlag();

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_COMMON_FLAGS_H_
