#include "recipes/prediction_args.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>

#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/core/status_macros.h"
#include "framework/io/file_manifest.h"
#include "framework/io/whole_file.h"

namespace xlmr::recipes {
namespace {

// What a recorded value must be: the flag's type and the range the flag's own check accepts.
enum class Kind { kCount, kSwitch, kName, kOptionalName, kNumber };
struct ArgRule {
  const char* name;
  Kind kind;
  int minimum = 0;  // kCount only
};

std::vector<ArgRule> RulesOf(models::Task task) {
  // The evaluation batch size changes no answer, but it changes the roundings: the CPU's
  // matrix products block their rows by the batch's, so byte-equal predictions need it too.
  std::vector<ArgRule> rules = {{"max_seq_length", Kind::kCount, 3}, {"per_device_eval_batch_size", Kind::kCount, 1}};
  switch (task) {
    case models::Task::kSequenceClassification:
    case models::Task::kRegression:
    case models::Task::kCrossEncoder:
      rules.push_back({"text_column", Kind::kName});
      rules.push_back({"text_pair_column", Kind::kOptionalName});
      break;
    case models::Task::kTokenClassification:
      rules.push_back({"tokens_column", Kind::kName});
      break;
    case models::Task::kQuestionAnswering:
      rules.front().minimum = 6;  // ReadQuestionAnsweringFlags: more than 5
      rules.push_back({"doc_stride", Kind::kCount, 0});
      rules.push_back({"n_best_size", Kind::kCount, 1});
      rules.push_back({"max_answer_length", Kind::kCount, 1});
      rules.push_back({"version_2_with_negative", Kind::kSwitch});
      rules.push_back({"null_score_diff_threshold", Kind::kNumber});
      break;
    case models::Task::kSentenceEmbedding:  // the texts' length and batch only
      break;
  }
  return rules;
}

// InvalidArgument "<path>: <what>", the one wording of a bad file.
absl::Status Bad(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

// The value of `rule` in `values`, checked; `limit` bounds max_seq_length (the model's positions).
absl::Status CheckValue(const std::string& path, const ArgRule& rule, const nlohmann::json& value, int64_t limit) {
  const std::string key = absl::StrCat("\"", rule.name, "\": expected ");
  switch (rule.kind) {
    case Kind::kCount: {
      const int64_t maximum = std::string(rule.name) == "max_seq_length" ? limit : INT32_MAX;
      if (!value.is_number_integer() || value.get<int64_t>() < rule.minimum || value.get<int64_t>() > maximum) {
        return Bad(path, absl::StrCat(key, "an integer in [", rule.minimum, ", ", maximum, "], got ", value.dump()));
      }
      return absl::OkStatus();
    }
    case Kind::kSwitch:
      return value.is_boolean() ? absl::OkStatus() : Bad(path, absl::StrCat(key, "true or false, got ", value.dump()));
    case Kind::kName:
      if (value.is_string() && !value.get<std::string>().empty()) return absl::OkStatus();
      return Bad(path, absl::StrCat(key, "a column name, got ", value.dump()));
    case Kind::kOptionalName:
      if (value.is_string()) return absl::OkStatus();
      return Bad(path, absl::StrCat(key, "a column name ('' for none), got ", value.dump()));
    case Kind::kNumber:
      return value.is_number() ? absl::OkStatus() : Bad(path, absl::StrCat(key, "a number, got ", value.dump()));
  }
  return absl::OkStatus();
}

// Exactly the task's keys, each valid.
absl::Status CheckValues(const std::string& path, const nlohmann::json& values, const models::EncoderConfig& config) {
  const std::vector<std::string> names = PredictionArgNames(config.task);
  const std::string expected = absl::StrCat("expected a JSON object of ", absl::StrJoin(names, ", "), " (a ",
                                            models::TaskName(config.task), " model)");
  if (!values.is_object()) return Bad(path, expected);
  for (const auto& [name, value] : values.items()) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return Bad(path, absl::StrCat(expected, "; \"", name, "\" is not one of them"));
    }
  }
  for (const ArgRule& rule : RulesOf(config.task)) {
    if (!values.contains(rule.name)) return Bad(path, absl::StrCat(expected, "; \"", rule.name, "\" is missing"));
    XLMR_RETURN_IF_ERROR(CheckValue(path, rule, values[rule.name], config.max_sequence_length()));
  }
  if (config.task == models::Task::kQuestionAnswering &&
      values["doc_stride"].get<int64_t>() >= values["max_seq_length"].get<int64_t>() - 5) {
    return Bad(path, absl::StrCat("\"doc_stride\": expected less than max_seq_length - 5 = ",
                                  values["max_seq_length"].get<int64_t>() - 5, ", got ", values["doc_stride"].dump()));
  }
  return absl::OkStatus();
}

// `value` as the flag's text: strings as they are, numbers and booleans as JSON prints them.
std::string FlagText(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// Whether a flag whose current text is `flag_text` holds `recorded` (numbers compared as numbers:
// the flag prints 0 where the file has 0.0).
bool SameValue(const nlohmann::json& recorded, const std::string& flag_text) {
  if (recorded.is_string()) return recorded.get<std::string>() == flag_text;
  return nlohmann::json::parse(flag_text, nullptr, /*allow_exceptions=*/false) == recorded;
}

// The shortest decimal that reads back as `value` (0.1f is 0.1, not 0.10000000149011612): the
// float the run used, as a person would write the flag.
nlohmann::json ShortestNumber(float value) {
  char text[32];
  const std::to_chars_result end = std::to_chars(text, text + sizeof(text), value);
  return nlohmann::json::parse(std::string(text, end.ptr));
}

}  // namespace

std::vector<std::string> PredictionArgNames(models::Task task) {
  std::vector<std::string> names;
  for (const ArgRule& rule : RulesOf(task)) names.push_back(rule.name);
  return names;
}

std::string PredictionArgsText(models::Task task, const TextFlags& text, const QaFlags& qa,
                               int64_t eval_batch_size) {
  nlohmann::ordered_json values;
  values["max_seq_length"] = text.max_seq_length;
  values["per_device_eval_batch_size"] = eval_batch_size;
  switch (task) {
    case models::Task::kSequenceClassification:
    case models::Task::kRegression:
    case models::Task::kCrossEncoder:
      values["text_column"] = text.text_column;
      values["text_pair_column"] = text.text_pair_column.value_or("");
      break;
    case models::Task::kTokenClassification:
      values["tokens_column"] = text.tokens_column;
      break;
    case models::Task::kQuestionAnswering:
      values["max_seq_length"] = qa.features.max_seq_length;
      values["doc_stride"] = qa.features.doc_stride;
      values["n_best_size"] = qa.postprocess.n_best_size;
      values["max_answer_length"] = qa.postprocess.max_answer_length;
      values["version_2_with_negative"] = qa.postprocess.version_2_with_negative;
      values["null_score_diff_threshold"] = ShortestNumber(qa.postprocess.null_score_diff_threshold);
      break;
    case models::Task::kSentenceEmbedding:
      break;
  }
  return values.dump(2) + "\n";
}

absl::StatusOr<std::optional<RecordedPredictionArgs>> ReadPredictionArgs(const std::string& model_dir,
                                                                         const models::EncoderConfig& config) {
  RecordedPredictionArgs recorded;
  recorded.path = absl::StrCat(model_dir, "/", kPredictionArgsFileName);
  std::error_code error;
  if (!std::filesystem::exists(recorded.path, error)) return std::nullopt;
  // A directory we wrote lists the file in its manifest (kNoManifest: the file came without one).
  const absl::StatusOr<io::ManifestCheck> verified =
      io::VerifyManifest(model_dir, {kPredictionArgsFileName}, io::ManifestScope::kRequiredOnly);
  if (!verified.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--model_dir=", model_dir, ": ", verified.status().message()));
  }
  absl::StatusOr<std::string> text = io::ReadWholeFile(recorded.path);
  if (!text.ok()) return absl::InvalidArgumentError(text.status().message());
  recorded.values = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  XLMR_RETURN_IF_ERROR(CheckValues(recorded.path, recorded.values, config));
  return recorded;
}

absl::StatusOr<AppliedPredictionArgs> ApplyPredictionArgs(const RecordedPredictionArgs& recorded,
                                                          const std::set<std::string>& given,
                                                          const std::string& program) {
  AppliedPredictionArgs result;
  std::vector<std::string> differences;
  for (const auto& [name, value] : recorded.values.items()) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) return Bad(recorded.path, absl::StrCat("'", name, "' is not a flag of ", program));
    if (given.count(name) > 0) {
      const std::string current = flag->CurrentValue();
      if (!SameValue(value, current)) {
        differences.push_back(absl::StrCat("--", name, "=", current, " (trained with ", FlagText(value), ")"));
      }
      continue;
    }
    std::string error;
    if (!flag->ParseFrom(FlagText(value), &error)) {
      return Bad(recorded.path, absl::StrCat("\"", name, "\": ", error));
    }
    result.applied.push_back(name);
  }
  if (!differences.empty()) {
    result.differences = absl::StrCat(program, ": ", absl::StrJoin(differences, ", "),
                                      ": the given value wins over the training run's ", recorded.path);
  }
  return result;
}

}  // namespace xlmr::recipes
