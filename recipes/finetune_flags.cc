#include "recipes/finetune_flags.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/core/status_macros.h"
#include "framework/optim/adamw.h"
#include "framework/optim/grad_clip.h"
#include "framework/optim/lr_schedule.h"
#include "framework/recompute/memory_budget.h"
#include "framework/train/evaluate.h"
#include "models/encoder/task_head.h"
#include "recipes/common_flags.h"
#include "recipes/embedded_default.h"
#include "recipes/profile_flags.h"
#include "recipes/prediction_args.h"
#include "recipes/runfiles.h"
#include "recipes/cross_encoder_files.h"
#include "recipes/sentence_transformers_files.h"

namespace {

// The defaults of the flags that fill train::TrainerOptions are that struct's own
// (framework/train/trainer.h), so that the library and the binary cannot disagree. A flag whose
// value is parsed into another form (--report_to, --eval_strategy, --greater_is_better) keeps its
// own. Abseil computes a default that is not a constant expression when the flag is first read,
// after static initialisation; the struct is built once and never destroyed.
const xlmr::train::TrainerOptions& TrainerDefaults() {
  static const auto* const defaults = new xlmr::train::TrainerOptions();
  return *defaults;
}

}  // namespace

// xlmr_finetune's own flags; those it shares with xlmr_predict (--model_dir, the text columns,
// --max_seq_length, --per_device_eval_batch_size, --fp16, --bf16, --device, question answering's
// --doc_stride, --n_best_size, --max_answer_length, --version_2_with_negative,
// --null_score_diff_threshold) are common_flags.cc's.
// Model and data.
ABSL_FLAG(std::string, train_file, "", "training data (.tsv, .csv, .jsonl); default: embedded data set");
ABSL_FLAG(std::string, eval_file, "", "evaluation data; default: embedded dev split (with the embedded "
          "training data) or none");
ABSL_FLAG(std::string, test_file, "", "test data evaluated at the end; default: embedded test split "
          "(with the embedded training data) or none");
ABSL_FLAG(std::string, label_column, "label", "column holding the label (a string; a number for regression)");
ABSL_FLAG(std::string, task, "", "sequence_classification | regression | token_classification | question_answering | "
          "sentence_embedding | cross_encoder; default: what --model_dir says (config.json's architectures and "
          "problem_type; config_sentence_transformers.json for a cross-encoder), else sequence_classification");
ABSL_FLAG(std::string, tags_column, "ner_tags", "token classification, .jsonl data: the field holding the tags");
// Batch.
ABSL_FLAG(int64_t, per_device_train_batch_size, TrainerDefaults().per_device_train_batch_size,
          "examples per micro-step per process");
ABSL_FLAG(int64_t, gradient_accumulation_steps, TrainerDefaults().gradient_accumulation_steps,
          "micro-steps per optimizer step");
ABSL_FLAG(bool, group_by_length, TrainerDefaults().group_by_length,
          "batch examples of similar length together (less padding)");
ABSL_FLAG(bool, padding_free, TrainerDefaults().padding_free,
          "train on packed micro-batches (the same examples, no padding tokens) "
          "wherever the attention has a variable-length form (fused); false pads each micro-batch");
ABSL_FLAG(bool, cuda_graphs, TrainerDefaults().cuda_graphs,
          "on CUDA, capture each batch layout's training step once and replay it (CUDA graphs; one "
          "process, outside --profile_steps); false runs every step op by op. Same results either way");
// Optimiser.
ABSL_FLAG(double, learning_rate, TrainerDefaults().learning_rate, "peak AdamW learning rate");
ABSL_FLAG(double, weight_decay, TrainerDefaults().weight_decay,
          "decoupled weight decay (never on biases and LayerNorm weights)");
ABSL_FLAG(double, adam_beta1, TrainerDefaults().adam_beta1, "AdamW beta1");
ABSL_FLAG(double, adam_beta2, TrainerDefaults().adam_beta2, "AdamW beta2");
ABSL_FLAG(double, adam_epsilon, TrainerDefaults().adam_epsilon, "AdamW epsilon");
ABSL_FLAG(double, max_grad_norm, TrainerDefaults().max_grad_norm,
          "global gradient-norm clipping threshold (0 disables)");
ABSL_FLAG(int, zero_stage, TrainerDefaults().zero_stage,
          "0 | 1: 1 shards the AdamW moments over the ranks (ZeRO stage 1: gradients "
          "reduce-scattered, weights all-gathered), 1/N of the optimizer memory per rank; same results");
ABSL_FLAG(std::string, lr_scheduler_type, TrainerDefaults().lr_scheduler_type,
          "linear | cosine | cosine_with_restarts | polynomial | constant | "
          "constant_with_warmup | inverse_sqrt | cosine_with_min_lr | cosine_warmup_with_min_lr | "
          "warmup_stable_decay (transformers' get_scheduler)");
ABSL_FLAG(std::string, lr_scheduler_kwargs, TrainerDefaults().lr_scheduler_kwargs,
          "the schedule's extra arguments as a JSON object, by HF's names, "
          "e.g. {\"num_cycles\": 2} or {\"num_decay_steps\": 100}");
ABSL_FLAG(double, warmup_ratio, TrainerDefaults().warmup_ratio,
          "fraction of the steps spent warming up (used when warmup_steps is 0)");
ABSL_FLAG(int64_t, warmup_steps, TrainerDefaults().warmup_steps, "warm-up steps");
ABSL_FLAG(double, num_train_epochs, TrainerDefaults().num_train_epochs, "epochs (fractional allowed)");
ABSL_FLAG(int64_t, max_steps, TrainerDefaults().max_steps,
          "optimizer steps; overrides num_train_epochs when > 0");
// Precision.
ABSL_FLAG(double, loss_scale_init, TrainerDefaults().loss_scaler.init_scale, "initial loss scale");
ABSL_FLAG(int64_t, loss_scale_growth_interval, TrainerDefaults().loss_scaler.growth_interval,
          "finite steps before the scale grows");
ABSL_FLAG(double, loss_scale_growth_factor, TrainerDefaults().loss_scaler.growth_factor,
          "scale growth factor");
ABSL_FLAG(double, loss_scale_backoff_factor, TrainerDefaults().loss_scaler.backoff_factor,
          "scale factor after an overflow");
ABSL_FLAG(double, loss_scale_min, TrainerDefaults().loss_scaler.min_scale,
          "the run stops when the scale would fall below this");
// Memory.
ABSL_FLAG(bool, gradient_checkpointing, false, "recompute each encoder block in backward");
ABSL_FLAG(std::string, activation_memory_budget, "", "bytes (e.g. 1.5GiB) or a fraction of the "
          "activation peak without checkpointing (e.g. 0.4); chooses the recompute plan");
ABSL_FLAG(std::string, attention, "fused", "fused | eager: fused (FlashAttention-style) attention keeps no "
          "[B, heads, S, S] probabilities; used wherever the device and head size have a fused kernel");
ABSL_FLAG(bool, print_memory_plan, false, "print the memory/recompute trade-off curve and exit");
// Regularisation.
ABSL_FLAG(std::string, dropout, "", "overrides hidden, attention and classifier dropout (default: config.json)");
ABSL_FLAG(double, label_smoothing_factor, TrainerDefaults().label_smoothing_factor,
          "in [0, 1]: mix the one-hot targets with the uniform distribution "
          "(HF's LabelSmoother; classification and token classification, not regression)");
// Run.
ABSL_FLAG(int64_t, seed, static_cast<int64_t>(TrainerDefaults().seed),
          "seed of initialisation, shuffling and dropout");
ABSL_FLAG(std::string, output_dir, TrainerDefaults().output_dir,
          "where the model, checkpoints and metrics go");
ABSL_FLAG(bool, overwrite_output_dir, false, "train from scratch and replace what --output_dir holds (at the "
          "new run's first checkpoint); without it a checkpoint-<step> there is resumed, and other content "
          "stops the run");
ABSL_FLAG(int64_t, logging_steps, TrainerDefaults().logging_steps,
          "console line and log-history entry (trainer_state.json, TensorBoard) every N "
          "steps (metrics.jsonl gets every step)");
ABSL_FLAG(std::string, report_to, "none", "none | tensorboard | all (all: every integration there is, TensorBoard)");
ABSL_FLAG(std::string, logging_dir, TrainerDefaults().logging_dir,
          "where --report_to=tensorboard writes its event file (default: "
          "<output_dir>/runs); watch with: tensorboard --logdir <output_dir>/runs");
ABSL_FLAG(std::string, eval_strategy, "", "no | steps | epoch: when to evaluate during training; default: steps "
          "when --eval_steps > 0, else epoch");
ABSL_FLAG(std::string, save_strategy, "", "no | steps | epoch: when to checkpoint during training (the last step "
          "is always checkpointed); default: steps when --save_steps > 0, else epoch");
ABSL_FLAG(int64_t, eval_steps, TrainerDefaults().eval_steps,
          "evaluate every N steps (0: unset; --eval_strategy=steps then uses --logging_steps)");
ABSL_FLAG(int64_t, save_steps, TrainerDefaults().save_steps, "checkpoint every N steps (0: unset)");
ABSL_FLAG(int, save_total_limit, TrainerDefaults().save_total_limit,
          "checkpoints kept (0: all); the best one (--load_best_model_at_end) is always kept");
ABSL_FLAG(bool, load_best_model_at_end, TrainerDefaults().load_best_model_at_end,
          "the final model is the checkpoint with the best evaluation by "
          "--metric_for_best_model (save and eval strategies must match)");
ABSL_FLAG(std::string, metric_for_best_model, TrainerDefaults().metric_for_best_model,
          "loss or a reported eval metric (e.g. accuracy, f1; the "
          "eval_ prefix is optional)");
ABSL_FLAG(std::string, greater_is_better, "", "true or false; unset: false for loss, true for the other metrics");
ABSL_FLAG(int64_t, early_stopping_patience, TrainerDefaults().early_stopping_patience,
          "stop after N evaluations in a row without improvement (0: never; "
          "needs --load_best_model_at_end)");
ABSL_FLAG(double, early_stopping_threshold, TrainerDefaults().early_stopping_threshold,
          "an improvement must exceed this");
ABSL_FLAG(std::string, resume_from_checkpoint, "", "a checkpoint directory, or 'latest' in --output_dir");
ABSL_FLAG(std::string, metrics_file, TrainerDefaults().metrics_file, "default: <output_dir>/metrics.jsonl");
ABSL_FLAG(std::string, cache_dir, "", "tokenized-data cache (default: $XDG_CACHE_HOME/xlmr_trainer or "
          "~/.cache/xlmr_trainer)");

namespace xlmr::recipes {
namespace {

template <typename T>
absl::Status ExpectPositive(const absl::Flag<T>& flag, const char* name) {
  const T value = absl::GetFlag(flag);
  return ExpectFlag(value > 0, name, "a positive number", absl::StrCat(value));
}

std::string DefaultCacheDir() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/xlmr_trainer";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.cache/xlmr_trainer";
  }
  return ".xlmr_cache";
}

// --report_to and --logging_dir (a directory given without TensorBoard would stay empty: refused).
absl::Status ReadReportingFlags(train::TrainerOptions& t) {
  const std::string report_to = absl::GetFlag(FLAGS_report_to);
  XLMR_RETURN_IF_ERROR(ExpectFlag(report_to == "none" || report_to == "tensorboard" || report_to == "all",
                                  "report_to", "none, tensorboard or all", report_to));
  t.report_to_tensorboard = report_to != "none";
  const std::string logging_dir = absl::GetFlag(FLAGS_logging_dir);
  if (logging_dir.empty()) return absl::OkStatus();
  XLMR_RETURN_IF_ERROR(ExpectFlag(t.report_to_tensorboard, "logging_dir", "--report_to=tensorboard with it",
                                  absl::StrCat(logging_dir, " with --report_to=", report_to)));
  t.logging_dir = UserPath(logging_dir);
  std::error_code error;
  const bool usable = !std::filesystem::exists(t.logging_dir, error) || std::filesystem::is_directory(t.logging_dir, error);
  return ExpectFlag(usable, "logging_dir", "a directory (or a path where one can be made)", logging_dir);
}

// --task: given, else the model directory's, else the embedded default's (sequence
// classification). An unreadable config.json is left for the model loader to report.
absl::Status ReadTaskFlag(FinetuneConfig& c) {
  const std::string task = absl::GetFlag(FLAGS_task);
  if (!task.empty()) {
    const std::optional<models::Task> parsed = models::ParseTask(task);
    XLMR_RETURN_IF_ERROR(ExpectFlag(parsed.has_value(), "task",
                                "sequence_classification, regression, token_classification, "
                                "question_answering, sentence_embedding or cross_encoder", task));
    c.task = *parsed;
    c.task_given = true;
    return absl::OkStatus();
  }
  c.task = models::Task::kSequenceClassification;
  if (c.model_dir.empty()) return absl::OkStatus();
  const absl::StatusOr<models::EncoderConfig> config = models::LoadEncoderConfig(c.model_dir + "/config.json");
  if (config.ok()) c.task = TaskOfModelDirectory(c.model_dir, config->task);
  return absl::OkStatus();
}

// --label_smoothing_factor, once the task is known. Regression is refused: HF's LabelSmoother
// needs class ids (it fails on float labels at the first step).
absl::Status ReadLabelSmoothingFlag(FinetuneConfig& c) {
  const double factor = absl::GetFlag(FLAGS_label_smoothing_factor);
  XLMR_RETURN_IF_ERROR(
      ExpectFlag(factor >= 0 && factor <= 1, "label_smoothing_factor", "a number in [0, 1]", absl::StrCat(factor)));
  XLMR_RETURN_IF_ERROR(ExpectFlag(factor == 0 || c.task != models::Task::kRegression, "label_smoothing_factor",
                                  "0 with --task=regression (label smoothing needs classes)", absl::StrCat(factor)));
  // HF's LabelSmoother reads the model's "logits", which a question-answering model does not return.
  XLMR_RETURN_IF_ERROR(ExpectFlag(factor == 0 || c.task != models::Task::kQuestionAnswering,
                                  "label_smoothing_factor", "0 with --task=question_answering",
                                  absl::StrCat(factor)));
  XLMR_RETURN_IF_ERROR(ExpectFlag(factor == 0 || c.task != models::Task::kSentenceEmbedding,
                                  "label_smoothing_factor", "0 with --task=sentence_embedding",
                                  absl::StrCat(factor)));
  XLMR_RETURN_IF_ERROR(ExpectFlag(factor == 0 || c.task != models::Task::kCrossEncoder, "label_smoothing_factor",
                                  "0 with --task=cross_encoder", absl::StrCat(factor)));
  c.trainer.label_smoothing_factor = factor;
  return absl::OkStatus();
}

// --task=question_answering's flags (common_flags.h), once --max_seq_length is known.
absl::Status ApplyQuestionAnsweringFlags(const std::set<std::string>& given, const TextFlags& text,
                                         FinetuneConfig& c) {
  XLMR_ASSIGN_OR_RETURN(const QaFlags qa, ReadQuestionAnsweringFlags(text, given.count("max_seq_length") > 0));
  c.max_seq_length = qa.features.max_seq_length;
  c.qa_features = qa.features;
  c.qa_postprocess = qa.postprocess;
  return absl::OkStatus();
}

// --task=sentence_embedding's flags and what it cannot be combined with (yet). A --model_dir
// that is a sentence-transformers model keeps its pooling (unless --pooling is given) and its
// Normalize module, as fitting it in sentence-transformers does.
absl::Status ApplyEmbeddingFlags(const std::set<std::string>& given, FinetuneConfig& c) {
  XLMR_ASSIGN_OR_RETURN(c.embedding, ReadEmbeddingFlags(given));
  if (!c.model_dir.empty()) {
    XLMR_ASSIGN_OR_RETURN(const SentenceTransformersModules modules, ReadSentenceTransformersModules(c.model_dir));
    if (given.count("pooling") == 0) c.embedding.pooling = modules.pooling;
    c.embedding.normalize = modules.normalize;
  }
  XLMR_RETURN_IF_ERROR(ExpectFlag(!absl::GetFlag(FLAGS_group_by_length), "group_by_length",
                                  "false with --task=sentence_embedding (rows hold several texts)", "true"));
  XLMR_RETURN_IF_ERROR(ExpectFlag(c.embedding.loss != EmbeddingLoss::kCosent || !c.train_file.empty(), "train_file",
                                  "a file of scored pairs with --embedding_loss=cosent (no embedded scored data "
                                  "set)",
                                  ""));
  c.trainer.columns_per_row = static_cast<int64_t>(c.embedding.columns.size());
  c.trainer.similarity_scale = c.embedding.similarity_scale;
  c.trainer.cached_mini_batch_size = c.embedding.mini_batch_size;
  c.trainer.gather_across_devices = c.embedding.gather_across_devices;
  return absl::OkStatus();
}

absl::Status ReadDataFlags(const std::set<std::string>& given, FinetuneConfig& c) {
  c.model_dir = ModelDirFlag();
  XLMR_RETURN_IF_ERROR(ReadTaskFlag(c));
  const bool question_answering = c.task == models::Task::kQuestionAnswering;
  const bool per_token = c.task == models::Task::kTokenClassification;
  c.train_file = UserPath(absl::GetFlag(FLAGS_train_file));
  c.eval_file = UserPath(absl::GetFlag(FLAGS_eval_file));
  c.test_file = UserPath(absl::GetFlag(FLAGS_test_file));
  if (c.task == models::Task::kSentenceEmbedding) XLMR_RETURN_IF_ERROR(ApplyEmbeddingFlags(given, c));
  if (c.train_file.empty()) {  // the embedded data set, with its own dev and test splits
    XLMR_RETURN_IF_ERROR(ExpectFlag(c.task != models::Task::kRegression, "task",
                                "--train_file with numeric labels for regression (no embedded "
                                "regression data set)", "regression"));
    XLMR_RETURN_IF_ERROR(ExpectFlag(c.task != models::Task::kCrossEncoder, "task",
                                    "--train_file of text pairs with labels in [0, 1] for cross_encoder (no "
                                    "embedded reranking data set)",
                                    "cross_encoder"));
    const std::string extension =
        per_token ? ".conll" : question_answering || c.task == models::Task::kSentenceEmbedding ? ".jsonl" : ".tsv";
    c.train_file = EmbeddedDataFile(c.task, "train" + extension);
    if (c.eval_file.empty()) c.eval_file = EmbeddedDataFile(c.task, "dev" + extension);
    if (c.test_file.empty()) c.test_file = EmbeddedDataFile(c.task, "test" + extension);
  }
  XLMR_ASSIGN_OR_RETURN(const TextFlags text, ReadTextFlags());
  c.columns.text_column = text.text_column;
  if (text.text_pair_column.has_value()) {
    XLMR_RETURN_IF_ERROR(ExpectFlag(!per_token, "text_pair_column", "no text pairs with --task=token_classification",
                                    *text.text_pair_column));
    c.columns.text_pair_column = text.text_pair_column;
  }
  c.columns.label_column = absl::GetFlag(FLAGS_label_column);
  // sentence-transformers' scored pairs (its stsb data) keep their score in a column "score".
  if (c.embedding.loss == EmbeddingLoss::kCosent && given.count("label_column") == 0) c.columns.label_column = "score";
  XLMR_RETURN_IF_ERROR(ExpectFlag(!c.columns.label_column.empty(), "label_column", "a column name", ""));
  c.tagged_columns.tokens_column = text.tokens_column;
  c.tagged_columns.tags_column = absl::GetFlag(FLAGS_tags_column);
  XLMR_RETURN_IF_ERROR(ExpectFlag(!c.tagged_columns.tags_column.empty(), "tags_column", "a field name", ""));
  c.max_seq_length = text.max_seq_length;
  const std::string dropout = absl::GetFlag(FLAGS_dropout);
  if (!dropout.empty()) {
    double value = 0;
    const bool parsed = absl::SimpleAtod(dropout, &value);
    XLMR_RETURN_IF_ERROR(ExpectFlag(parsed && value >= 0 && value < 1, "dropout", "a number in [0, 1)", dropout));
    c.dropout = value;
  }
  XLMR_RETURN_IF_ERROR(ReadLabelSmoothingFlag(c));
  if (question_answering) XLMR_RETURN_IF_ERROR(ApplyQuestionAnsweringFlags(given, text, c));
  c.cache_dir = absl::GetFlag(FLAGS_cache_dir).empty() ? DefaultCacheDir() : UserPath(absl::GetFlag(FLAGS_cache_dir));
  return absl::OkStatus();
}

absl::Status ReadOptimizerFlags(train::TrainerOptions& t) {
  XLMR_RETURN_IF_ERROR(ExpectPositive(FLAGS_per_device_train_batch_size, "per_device_train_batch_size"));
  XLMR_RETURN_IF_ERROR(ExpectPositive(FLAGS_gradient_accumulation_steps, "gradient_accumulation_steps"));
  t.per_device_train_batch_size = absl::GetFlag(FLAGS_per_device_train_batch_size);
  XLMR_ASSIGN_OR_RETURN(t.per_device_eval_batch_size, ReadEvalBatchSizeFlag());
  t.gradient_accumulation_steps = absl::GetFlag(FLAGS_gradient_accumulation_steps);
  t.group_by_length = absl::GetFlag(FLAGS_group_by_length);
  t.padding_free = absl::GetFlag(FLAGS_padding_free);
  t.cuda_graphs = absl::GetFlag(FLAGS_cuda_graphs);
  t.learning_rate = absl::GetFlag(FLAGS_learning_rate);
  t.adam_beta1 = absl::GetFlag(FLAGS_adam_beta1);
  t.adam_beta2 = absl::GetFlag(FLAGS_adam_beta2);
  t.adam_epsilon = absl::GetFlag(FLAGS_adam_epsilon);
  t.weight_decay = absl::GetFlag(FLAGS_weight_decay);
  XLMR_RETURN_IF_ERROR(optim::ValidateAdamWOptions(
      optim::AdamWOptions{t.adam_beta1, t.adam_beta2, t.adam_epsilon, t.weight_decay}));
  t.max_grad_norm = absl::GetFlag(FLAGS_max_grad_norm);
  XLMR_RETURN_IF_ERROR(optim::ValidateMaxGradNorm(t.max_grad_norm));
  t.zero_stage = absl::GetFlag(FLAGS_zero_stage);
  XLMR_RETURN_IF_ERROR(ExpectFlag(t.zero_stage == 0 || t.zero_stage == 1, "zero_stage", "0 or 1",
                                  absl::StrCat(t.zero_stage)));
  t.lr_scheduler_type = absl::GetFlag(FLAGS_lr_scheduler_type);
  t.lr_scheduler_kwargs = absl::GetFlag(FLAGS_lr_scheduler_kwargs);
  t.warmup_ratio = absl::GetFlag(FLAGS_warmup_ratio);
  t.warmup_steps = absl::GetFlag(FLAGS_warmup_steps);
  // The schedule's own validation (type, learning rate, warm-up, kwargs) on a nominal length;
  // the trainer builds the real one once the number of steps is known.
  XLMR_RETURN_IF_ERROR(optim::MakeLrSchedule(t.lr_scheduler_type, t.learning_rate, 1, t.warmup_steps,
                                             t.warmup_ratio, t.lr_scheduler_kwargs)
                           .status());
  t.num_train_epochs = absl::GetFlag(FLAGS_num_train_epochs);
  t.max_steps = absl::GetFlag(FLAGS_max_steps);
  XLMR_RETURN_IF_ERROR(ExpectFlag(t.max_steps > 0 || (t.max_steps == -1 && std::isfinite(t.num_train_epochs) &&
                                                  t.num_train_epochs > 0),
                              t.max_steps > 0 || t.max_steps == -1 ? "num_train_epochs" : "max_steps",
                              "a positive number (max_steps: -1 to train for num_train_epochs)",
                              t.max_steps > 0 || t.max_steps == -1 ? absl::StrCat(t.num_train_epochs)
                                                                   : absl::StrCat(t.max_steps)));
  return absl::OkStatus();
}

absl::StatusOr<train::IntervalStrategy> ParseStrategy(const std::string& value, const char* flag, int64_t steps) {
  if (value.empty()) return steps > 0 ? train::IntervalStrategy::kSteps : train::IntervalStrategy::kEpoch;
  if (value == "no") return train::IntervalStrategy::kNo;
  if (value == "steps") return train::IntervalStrategy::kSteps;
  if (value == "epoch") return train::IntervalStrategy::kEpoch;
  return ExpectFlag(false, flag, "no, steps or epoch", value);
}

// --eval_strategy, --save_strategy, their steps, --save_total_limit, the best model and early
// stopping, with TrainingArguments.__post_init__'s checks.
absl::Status ReadStrategyFlags(FinetuneConfig& c) {
  train::TrainerOptions& t = c.trainer;
  t.eval_steps = absl::GetFlag(FLAGS_eval_steps);
  t.save_steps = absl::GetFlag(FLAGS_save_steps);
  XLMR_RETURN_IF_ERROR(ExpectFlag(t.eval_steps >= 0, "eval_steps", "a non-negative integer", absl::StrCat(t.eval_steps)));
  XLMR_RETURN_IF_ERROR(ExpectFlag(t.save_steps >= 0, "save_steps", "a non-negative integer", absl::StrCat(t.save_steps)));
  XLMR_ASSIGN_OR_RETURN(t.eval_strategy, ParseStrategy(absl::GetFlag(FLAGS_eval_strategy), "eval_strategy", t.eval_steps));
  XLMR_ASSIGN_OR_RETURN(t.save_strategy, ParseStrategy(absl::GetFlag(FLAGS_save_strategy), "save_strategy", t.save_steps));
  using train::IntervalStrategy;
  if (t.eval_strategy == IntervalStrategy::kSteps && t.eval_steps == 0) t.eval_steps = t.logging_steps;  // as HF
  XLMR_RETURN_IF_ERROR(ExpectFlag(t.save_strategy != IntervalStrategy::kSteps || t.save_steps > 0, "save_steps",
                                  "a positive number with --save_strategy=steps", absl::StrCat(t.save_steps)));
  t.save_total_limit = absl::GetFlag(FLAGS_save_total_limit);
  XLMR_RETURN_IF_ERROR(ExpectFlag(t.save_total_limit >= 0, "save_total_limit", "a non-negative integer",
                              absl::StrCat(t.save_total_limit)));
  t.load_best_model_at_end = absl::GetFlag(FLAGS_load_best_model_at_end);
  std::string metric = absl::GetFlag(FLAGS_metric_for_best_model);
  if (metric.rfind("eval_", 0) == 0) metric = metric.substr(5);
  const std::vector<std::string> names = train::ReportedMetricNames(TrainingObjective(c));
  XLMR_RETURN_IF_ERROR(ExpectFlag(metric == "loss" || std::find(names.begin(), names.end(), metric) != names.end(),
                                  "metric_for_best_model",
                                  absl::StrCat("loss or one of ", absl::StrJoin(names, ", "), " for --task=",
                                               models::TaskName(c.task)),
                                  absl::GetFlag(FLAGS_metric_for_best_model)));
  t.metric_for_best_model = metric;
  const std::string greater = absl::GetFlag(FLAGS_greater_is_better);
  XLMR_RETURN_IF_ERROR(ExpectFlag(greater.empty() || greater == "true" || greater == "false", "greater_is_better",
                                  "true or false", greater));
  t.greater_is_better = greater.empty() ? metric != "loss" : greater == "true";
  if (t.load_best_model_at_end) {
    XLMR_RETURN_IF_ERROR(ExpectFlag(t.eval_strategy != IntervalStrategy::kNo, "eval_strategy",
                                    "steps or epoch with --load_best_model_at_end", "no"));
    XLMR_RETURN_IF_ERROR(ExpectFlag(t.save_strategy == t.eval_strategy, "save_strategy",
                                    "the same as --eval_strategy with --load_best_model_at_end",
                                    absl::GetFlag(FLAGS_save_strategy)));
    XLMR_RETURN_IF_ERROR(ExpectFlag(t.eval_strategy != IntervalStrategy::kSteps || t.save_steps % t.eval_steps == 0,
                                    "save_steps",
                                    absl::StrCat("a multiple of --eval_steps (", t.eval_steps,
                                                 ") with --load_best_model_at_end"),
                                    absl::StrCat(t.save_steps)));
    XLMR_RETURN_IF_ERROR(ExpectFlag(!c.eval_file.empty(), "load_best_model_at_end",
                                    "an --eval_file to evaluate", "true"));
  }
  t.early_stopping_patience = absl::GetFlag(FLAGS_early_stopping_patience);
  t.early_stopping_threshold = absl::GetFlag(FLAGS_early_stopping_threshold);
  XLMR_RETURN_IF_ERROR(ExpectFlag(t.early_stopping_patience >= 0, "early_stopping_patience",
                                  "a non-negative integer", absl::StrCat(t.early_stopping_patience)));
  XLMR_RETURN_IF_ERROR(ExpectFlag(t.early_stopping_patience == 0 || t.load_best_model_at_end,
                                  "early_stopping_patience", "0 without --load_best_model_at_end (as HF)",
                                  absl::StrCat(t.early_stopping_patience)));
  XLMR_RETURN_IF_ERROR(ExpectFlag(std::isfinite(t.early_stopping_threshold) && t.early_stopping_threshold >= 0,
                                  "early_stopping_threshold", "a non-negative number",
                                  absl::StrCat(t.early_stopping_threshold)));
  return absl::OkStatus();
}

absl::Status ReadRunFlags(FinetuneConfig& c) {
  train::TrainerOptions& t = c.trainer;
  XLMR_ASSIGN_OR_RETURN(t.autocast, ReadAutocastFlag());
  t.loss_scaler.init_scale = absl::GetFlag(FLAGS_loss_scale_init);
  t.loss_scaler.growth_interval = absl::GetFlag(FLAGS_loss_scale_growth_interval);
  t.loss_scaler.growth_factor = absl::GetFlag(FLAGS_loss_scale_growth_factor);
  t.loss_scaler.backoff_factor = absl::GetFlag(FLAGS_loss_scale_backoff_factor);
  t.loss_scaler.min_scale = absl::GetFlag(FLAGS_loss_scale_min);
  XLMR_RETURN_IF_ERROR(amp::ValidateLossScalerOptions(t.loss_scaler));
  c.gradient_checkpointing = absl::GetFlag(FLAGS_gradient_checkpointing);
  const std::string budget = absl::GetFlag(FLAGS_activation_memory_budget);
  if (!budget.empty()) {  // malformed: stop before any data is read
    XLMR_ASSIGN_OR_RETURN(c.activation_memory_budget,
                          recompute::ParseMemoryBudget(budget, "activation_memory_budget"));
  }
  c.print_memory_plan = absl::GetFlag(FLAGS_print_memory_plan);
  const std::string attention = absl::GetFlag(FLAGS_attention);
  const std::optional<models::AttentionImplementation> parsed_attention =
      models::ParseAttentionImplementation(attention);
  XLMR_RETURN_IF_ERROR(ExpectFlag(parsed_attention.has_value(), "attention", "fused or eager", attention));
  c.attention = *parsed_attention;
  const int64_t seed = absl::GetFlag(FLAGS_seed);
  XLMR_RETURN_IF_ERROR(ExpectFlag(seed >= 0, "seed", "a non-negative integer", absl::StrCat(seed)));
  t.seed = static_cast<uint64_t>(seed);
  XLMR_ASSIGN_OR_RETURN(c.device, ReadDeviceFlag());
  XLMR_ASSIGN_OR_RETURN(c.gemm_algorithms, ReadGemmAlgorithmsFlag());
  t.output_dir = UserPath(absl::GetFlag(FLAGS_output_dir));
  XLMR_RETURN_IF_ERROR(ExpectFlag(!t.output_dir.empty(), "output_dir", "a directory", ""));
  c.overwrite_output_dir = absl::GetFlag(FLAGS_overwrite_output_dir);
  t.metrics_file = UserPath(absl::GetFlag(FLAGS_metrics_file));
  XLMR_ASSIGN_OR_RETURN(t.profile, ReadProfileStepsFlag());
  t.logging_steps = absl::GetFlag(FLAGS_logging_steps);
  XLMR_RETURN_IF_ERROR(ExpectPositive(FLAGS_logging_steps, "logging_steps"));
  XLMR_RETURN_IF_ERROR(ReadReportingFlags(t));
  XLMR_RETURN_IF_ERROR(ReadStrategyFlags(c));
  c.resume_from_checkpoint = absl::GetFlag(FLAGS_resume_from_checkpoint);
  c.resume = !c.resume_from_checkpoint.empty();
  if (c.resume && c.resume_from_checkpoint != "latest") c.resume_from_checkpoint = UserPath(c.resume_from_checkpoint);
  return absl::OkStatus();
}

// A --model_dir that a run of the same task saved recorded the settings its predictions depend
// on (prediction_args.h): they are the defaults of those flags here too, so that training on
// from it (and its evaluations) reads text as it was read, unless the command line says
// otherwise; `set_flags` gains those applied. A model of another task keeps only its backbone,
// and its settings do not carry over. An unreadable config.json is left for the model loader
// to report, an invalid --task for ReadTaskFlag.
absl::Status ApplyModelDirPredictionArgs(const std::set<std::string>& given, FinetuneConfig& c,
                                         std::set<std::string>& set_flags) {
  const std::string model_dir = ModelDirFlag();
  if (model_dir.empty()) return absl::OkStatus();
  const absl::StatusOr<models::EncoderConfig> model_config = models::LoadEncoderConfig(model_dir + "/config.json");
  if (!model_config.ok()) return absl::OkStatus();
  const std::string task = absl::GetFlag(FLAGS_task);
  if (!task.empty() && models::ParseTask(task) != model_config->task) return absl::OkStatus();
  XLMR_ASSIGN_OR_RETURN(const std::optional<RecordedPredictionArgs> recorded,
                        ReadPredictionArgs(model_dir, *model_config));
  if (!recorded.has_value()) return absl::OkStatus();
  XLMR_ASSIGN_OR_RETURN(const AppliedPredictionArgs applied, ApplyPredictionArgs(*recorded, given, "xlmr_finetune"));
  set_flags.insert(applied.applied.begin(), applied.applied.end());
  c.trained_args_differences = applied.differences;
  return absl::OkStatus();
}

}  // namespace

train::Objective TrainingObjective(const FinetuneConfig& config) {
  return config.task == models::Task::kSentenceEmbedding ? EmbeddingObjective(config.embedding.loss)
                                                          : models::ObjectiveOf(config.task);
}

std::string EmbeddedDataFile(const std::string& name) {
  return ShippedFile("recipes/data/langid/" + name);
}

std::string EmbeddedExampleName(models::Task task) {
  switch (task) {
    case models::Task::kTokenClassification:
      return "langid_ner";
    case models::Task::kQuestionAnswering:
      return "langid_qa";
    case models::Task::kSentenceEmbedding:
      return "langid_bitext";
    default:
      return "langid";
  }
}

std::string EmbeddedDataFile(models::Task task, const std::string& name) {
  return ShippedFile(absl::StrCat("recipes/data/", EmbeddedExampleName(task), "/", name));
}

std::string EmbeddedModelConfigFile(models::Task task) {
  return task == models::Task::kQuestionAnswering ? EmbeddedDataFile(task, "config.json")
                                                      : EmbeddedDataFile("config.json");
}

absl::StatusOr<FinetuneConfig> ReadFinetuneFlags(const std::set<std::string>& given) {
  FinetuneConfig config;
  if (IsEmbeddedDefaultRun(given)) {
    // The flag is read again below; here it only picks the preset.
    const std::optional<models::Task> task = models::ParseTask(absl::GetFlag(FLAGS_task));
    const models::Task preset_task = task.value_or(models::Task::kSequenceClassification);
    config.embedded_training_args_file = EmbeddedDataFile(preset_task, "training_args.json");
    XLMR_ASSIGN_OR_RETURN(config.embedded_training_args,
                          ApplyEmbeddedTrainingArgs(config.embedded_training_args_file, given));
  }
  // A preset counts as set for the task defaults that apply only to flags left unset (run_qa's
  // --max_seq_length 384): the embedded question-answering example sets its own.
  std::set<std::string> set_flags = given;
  for (const std::string& applied : config.embedded_training_args) {
    set_flags.insert(applied.substr(0, applied.find('=')));
  }
  XLMR_RETURN_IF_ERROR(ApplyModelDirPredictionArgs(given, config, set_flags));
  XLMR_RETURN_IF_ERROR(ReadDataFlags(set_flags, config));
  XLMR_RETURN_IF_ERROR(ReadOptimizerFlags(config.trainer));
  if (config.task == models::Task::kQuestionAnswering) {
    // Question answering trains on padded windows (run_qa pads each to max_seq_length, and most
    // are full): its head reads [2, B, S]. An explicit --padding_free is refused, not ignored.
    XLMR_RETURN_IF_ERROR(ExpectFlag(given.count("padding_free") == 0 || !config.trainer.padding_free,
                                    "padding_free", "false or unset with --task=question_answering "
                                    "(its windows are padded)", "true"));
    config.trainer.padding_free = false;
  }
  XLMR_RETURN_IF_ERROR(ReadRunFlags(config));
  return config;
}

}  // namespace xlmr::recipes
