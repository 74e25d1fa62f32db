#include "models/encoder/config.h"

#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/core/status_macros.h"

namespace xlmr::models {
namespace {

using nlohmann::json;

// Reads typed values out of one config.json object, keeping the default for absent keys.
// Every error starts with "<source>: <key>" so the user knows where to look.
class ConfigReader {
 public:
  ConfigReader(const json& object, const std::string& source) : object_(object), source_(source) {}

  bool Has(const std::string& key) const {
    return object_.contains(key) && !object_.at(key).is_null();
  }

  absl::Status Error(const std::string& key, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(source_, ": ", key, " ", what));
  }

  absl::Status ReadInt(const std::string& key, int64_t* value) const {
    if (!Has(key)) return absl::OkStatus();
    const json& item = object_.at(key);
    if (!item.is_number_integer()) return Error(key, "must be an integer, got " + item.dump());
    if (item.is_number_unsigned() &&
        item.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Error(key, "(" + item.dump() + ") is too large");
    }
    *value = item.get<int64_t>();
    return absl::OkStatus();
  }

  absl::Status ReadNumber(const std::string& key, double* value) const {
    if (!Has(key)) return absl::OkStatus();
    const json& item = object_.at(key);
    if (!item.is_number()) return Error(key, "must be a number, got " + item.dump());
    *value = item.get<double>();
    return absl::OkStatus();
  }

  absl::Status ReadOptionalNumber(const std::string& key, std::optional<double>* value) const {
    if (!Has(key)) return absl::OkStatus();  // null means "unset", as in HF
    double number = 0.0;
    XLMR_RETURN_IF_ERROR(ReadNumber(key, &number));
    *value = number;
    return absl::OkStatus();
  }

  absl::Status ReadString(const std::string& key, std::string* value) const {
    if (!Has(key)) return absl::OkStatus();
    const json& item = object_.at(key);
    if (!item.is_string()) return Error(key, "must be a string, got " + item.dump());
    *value = item.get<std::string>();
    return absl::OkStatus();
  }

  absl::Status ReadOptionalString(const std::string& key,
                                  std::optional<std::string>* value) const {
    if (!Has(key)) return absl::OkStatus();
    std::string text;
    XLMR_RETURN_IF_ERROR(ReadString(key, &text));
    *value = std::move(text);
    return absl::OkStatus();
  }

  const json& At(const std::string& key) const { return object_.at(key); }

 private:
  const json& object_;
  const std::string& source_;
};

absl::Status ReadFields(const ConfigReader& reader, EncoderConfig* config) {
  XLMR_RETURN_IF_ERROR(reader.ReadInt("vocab_size", &config->vocab_size));
  XLMR_RETURN_IF_ERROR(reader.ReadInt("hidden_size", &config->hidden_size));
  XLMR_RETURN_IF_ERROR(reader.ReadInt("num_hidden_layers", &config->num_hidden_layers));
  XLMR_RETURN_IF_ERROR(reader.ReadInt("num_attention_heads", &config->num_attention_heads));
  XLMR_RETURN_IF_ERROR(reader.ReadInt("intermediate_size", &config->intermediate_size));
  XLMR_RETURN_IF_ERROR(reader.ReadString("hidden_act", &config->hidden_act));
  XLMR_RETURN_IF_ERROR(reader.ReadNumber("hidden_dropout_prob", &config->hidden_dropout_prob));
  XLMR_RETURN_IF_ERROR(
      reader.ReadNumber("attention_probs_dropout_prob", &config->attention_probs_dropout_prob));
  XLMR_RETURN_IF_ERROR(reader.ReadOptionalNumber("classifier_dropout", &config->classifier_dropout));
  XLMR_RETURN_IF_ERROR(
      reader.ReadInt("max_position_embeddings", &config->max_position_embeddings));
  XLMR_RETURN_IF_ERROR(reader.ReadInt("type_vocab_size", &config->type_vocab_size));
  XLMR_RETURN_IF_ERROR(reader.ReadNumber("layer_norm_eps", &config->layer_norm_eps));
  XLMR_RETURN_IF_ERROR(reader.ReadInt("pad_token_id", &config->pad_token_id));
  XLMR_RETURN_IF_ERROR(reader.ReadInt("bos_token_id", &config->bos_token_id));
  XLMR_RETURN_IF_ERROR(reader.ReadInt("eos_token_id", &config->eos_token_id));
  XLMR_RETURN_IF_ERROR(reader.ReadNumber("initializer_range", &config->initializer_range));
  XLMR_RETURN_IF_ERROR(reader.ReadOptionalString("problem_type", &config->problem_type));
  return absl::OkStatus();
}

// Keys that select an architecture we do not implement; absent means HF's default, which we do.
absl::Status CheckArchitectureKeys(const ConfigReader& reader, const EncoderConfig& config) {
  if (config.hidden_act != "gelu") {
    return reader.Error("hidden_act", "is \"" + config.hidden_act +
                                          "\", but only \"gelu\" (exact erf GELU) is implemented");
  }
  std::optional<std::string> text;
  XLMR_RETURN_IF_ERROR(reader.ReadOptionalString("position_embedding_type", &text));
  if (text.has_value() && *text != "absolute") {
    return reader.Error("position_embedding_type",
                        "is \"" + *text + "\", but only \"absolute\" is implemented");
  }
  return absl::OkStatus();
}

// model_type: the family (EncoderConfig::family), one of the supported ones.
absl::Status ReadFamily(const ConfigReader& reader, EncoderConfig* config) {
  std::optional<std::string> text;
  XLMR_RETURN_IF_ERROR(reader.ReadOptionalString("model_type", &text));
  if (!text.has_value()) return absl::OkStatus();
  if (const ModelFamily* family = FindModelFamily(*text); family != nullptr) {
    config->family = family;
    return absl::OkStatus();
  }
  std::vector<std::string> supported;
  for (const ModelFamily& family : ModelFamilies()) supported.push_back(absl::StrCat("\"", family.model_type, "\""));
  return reader.Error("model_type",
                      absl::StrCat("is \"", *text, "\", expected one of ", absl::StrJoin(supported, ", ")));
}

absl::Status CheckSizes(const ConfigReader& reader, const EncoderConfig& config) {
  const std::pair<const char*, int64_t> sizes[] = {
      {"vocab_size", config.vocab_size},
      {"hidden_size", config.hidden_size},
      {"num_hidden_layers", config.num_hidden_layers},
      {"num_attention_heads", config.num_attention_heads},
      {"intermediate_size", config.intermediate_size},
      {"max_position_embeddings", config.max_position_embeddings},
      {"type_vocab_size", config.type_vocab_size},
  };
  for (const auto& [key, value] : sizes) {
    if (value <= 0) return reader.Error(key, absl::StrCat("(", value, ") must be positive"));
  }
  if (config.hidden_size % config.num_attention_heads != 0) {
    return reader.Error("hidden_size",
                        absl::StrCat("(", config.hidden_size, ") must be divisible by ",
                                     "num_attention_heads (", config.num_attention_heads, ")"));
  }
  if (!(config.layer_norm_eps > 0.0)) {
    return reader.Error("layer_norm_eps", absl::StrCat("(", config.layer_norm_eps,
                                                       ") must be positive"));
  }
  if (!(config.initializer_range >= 0.0)) {
    return reader.Error("initializer_range", absl::StrCat("(", config.initializer_range,
                                                          ") must be >= 0"));
  }
  return absl::OkStatus();
}

absl::Status CheckDropouts(const ConfigReader& reader, const EncoderConfig& config) {
  const std::pair<const char*, std::optional<double>> dropouts[] = {
      {"hidden_dropout_prob", config.hidden_dropout_prob},
      {"attention_probs_dropout_prob", config.attention_probs_dropout_prob},
      {"classifier_dropout", config.classifier_dropout},
  };
  for (const auto& [key, value] : dropouts) {
    if (value.has_value() && !(*value >= 0.0 && *value < 1.0)) {
      return reader.Error(key, absl::StrCat("(", *value, ") must be in [0, 1)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTokenIds(const ConfigReader& reader, const EncoderConfig& config) {
  const std::pair<const char*, int64_t> ids[] = {
      {"pad_token_id", config.pad_token_id},
      {"bos_token_id", config.bos_token_id},
      {"eos_token_id", config.eos_token_id},
  };
  for (const auto& [key, value] : ids) {
    if (value < 0 || value >= config.vocab_size) {
      return reader.Error(key, absl::StrCat("(", value, ") must be in [0, vocab_size = ",
                                            config.vocab_size, ")"));
    }
  }
  // Position ids are pad_token_id + 1 + index (fairseq/RoBERTa), so the table must hold more.
  if (config.max_position_embeddings <= config.pad_token_id + 1) {
    return reader.Error("max_position_embeddings",
                        absl::StrCat("(", config.max_position_embeddings,
                                     ") must exceed pad_token_id + 1 (", config.pad_token_id + 1,
                                     "): positions start after the pad id"));
  }
  if (config.problem_type.has_value() && *config.problem_type != "regression" &&
      *config.problem_type != "single_label_classification" &&
      *config.problem_type != "multi_label_classification") {
    return reader.Error("problem_type",
                        "is \"" + *config.problem_type +
                            "\", expected null, \"regression\", \"single_label_classification\" "
                            "or \"multi_label_classification\"");
  }
  return absl::OkStatus();
}

// Parses a decimal id written as a JSON object key ("0", "1", ...; no sign, no leading zero).
bool ParseLabelId(const std::string& key, int64_t* id) {
  if (key.empty() || (key.size() > 1 && key[0] == '0')) return false;
  for (char c : key) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(key, id);
}

absl::StatusOr<std::vector<std::string>> ParseId2Label(const ConfigReader& reader) {
  const json& map = reader.At("id2label");
  if (!map.is_object() || map.empty()) {
    return reader.Error("id2label", "must be a non-empty object {\"0\": name, ...}");
  }
  const int64_t count = static_cast<int64_t>(map.size());
  std::vector<std::string> names(count);
  for (const auto& [key, name] : map.items()) {
    int64_t id = -1;
    if (!ParseLabelId(key, &id) || id >= count) {
      return reader.Error("id2label", absl::StrCat("key \"", key, "\" must be an integer in [0, ",
                                                   count, ") (keys must be 0..n-1)"));
    }
    if (!name.is_string()) {
      return reader.Error("id2label[\"" + key + "\"]", "must be a string, got " + name.dump());
    }
    names[id] = name.get<std::string>();
  }
  // `count` distinct canonical keys, all in [0, count): every id is present exactly once.
  return names;
}

// label2id as the only label map: ids must be exactly 0..n-1.
absl::StatusOr<std::vector<std::string>> ParseLabel2Id(const ConfigReader& reader) {
  const json& map = reader.At("label2id");
  if (!map.is_object() || map.empty()) {
    return reader.Error("label2id", "must be a non-empty object {name: id, ...}");
  }
  const int64_t count = static_cast<int64_t>(map.size());
  std::vector<std::string> names(count);
  std::vector<bool> seen(count, false);
  for (const auto& [name, id] : map.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= count ||
        seen[id.get<int64_t>()]) {
      return reader.Error(absl::StrCat("label2id[\"", name, "\"]"),
                          absl::StrCat("= ", id.dump(), ": ids must be the integers 0..",
                                       count - 1, ", each once"));
    }
    names[id.get<int64_t>()] = name;
    seen[id.get<int64_t>()] = true;
  }
  return names;
}

absl::Status CheckUniqueNames(const ConfigReader& reader, const std::vector<std::string>& names) {
  absl::flat_hash_map<std::string, size_t> first_id;
  for (size_t id = 0; id < names.size(); ++id) {
    auto [it, inserted] = first_id.emplace(names[id], id);
    if (!inserted) {
      return reader.Error("id2label", absl::StrCat("names must be unique: \"", names[id],
                                                   "\" is both ", it->second, " and ", id));
    }
  }
  return absl::OkStatus();
}

// label2id next to id2label must be its exact inverse (HF writes both; we trust id2label).
absl::Status CheckLabel2IdInverse(const ConfigReader& reader,
                                  const std::vector<std::string>& names) {
  const json& map = reader.At("label2id");
  bool matches = map.is_object() && map.size() == names.size();
  for (size_t id = 0; matches && id < names.size(); ++id) {
    matches = map.contains(names[id]) && map.at(names[id]).is_number_integer() &&
              map.at(names[id]).get<int64_t>() == static_cast<int64_t>(id);
  }
  if (!matches) {
    return reader.Error("label2id", "must be the inverse of id2label, got " + map.dump());
  }
  return absl::OkStatus();
}

absl::Status ReadLabels(const ConfigReader& reader, EncoderConfig* config) {
  const bool has_id2label = reader.Has("id2label");
  const bool has_label2id = reader.Has("label2id");
  if (has_id2label) {
    XLMR_ASSIGN_OR_RETURN(config->id2label, ParseId2Label(reader));
  } else if (has_label2id) {
    XLMR_ASSIGN_OR_RETURN(config->id2label, ParseLabel2Id(reader));
  }
  XLMR_RETURN_IF_ERROR(CheckUniqueNames(reader, config->id2label));
  if (has_id2label && has_label2id) {
    XLMR_RETURN_IF_ERROR(CheckLabel2IdInverse(reader, config->id2label));
  }
  if (reader.Has("num_labels")) {
    int64_t num_labels = 0;
    XLMR_RETURN_IF_ERROR(reader.ReadInt("num_labels", &num_labels));
    if (!has_id2label && !has_label2id) {
      if (num_labels <= 0) {
        return reader.Error("num_labels", absl::StrCat("(", num_labels, ") must be positive"));
      }
      config->id2label.clear();
      for (int64_t id = 0; id < num_labels; ++id) config->id2label.push_back(absl::StrCat("LABEL_", id));
    } else if (num_labels != config->num_labels()) {
      return reader.Error("num_labels", absl::StrCat("(", num_labels, ") disagrees with the ",
                                                     config->num_labels(), " labels of ",
                                                     has_id2label ? "id2label" : "label2id"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open config file"));
  std::ostringstream content;
  content << file.rdbuf();
  if (file.bad()) return absl::DataLossError(absl::StrCat(path, ": read failed"));
  return content.str();
}

}  // namespace

std::vector<std::pair<std::string, int64_t>> EncoderConfig::label2id() const {
  std::vector<std::pair<std::string, int64_t>> pairs;
  pairs.reserve(id2label.size());
  for (size_t id = 0; id < id2label.size(); ++id) {
    pairs.emplace_back(id2label[id], static_cast<int64_t>(id));
  }
  return pairs;
}

// The task from architectures[0] and problem_type (EncoderConfig::task). Other architectures
// (e.g. the hub's XLMRobertaForMaskedLM) are backbones a sequence classifier starts from.
absl::Status ReadTask(const ConfigReader& reader, EncoderConfig* config) {
  if (reader.Has("architectures")) {
    const json& list = reader.At("architectures");
    if (!list.is_null() && (!list.is_array() || (!list.empty() && !list[0].is_string()))) {
      return reader.Error("architectures", "must be a list of class names, got " + list.dump());
    }
    if (list.is_array() && !list.empty() &&
        list[0].get<std::string>() == ArchitectureName(*config->family, Task::kTokenClassification)) {
      config->task = Task::kTokenClassification;
      return absl::OkStatus();
    }
    if (list.is_array() && !list.empty() &&
        list[0].get<std::string>() == ArchitectureName(*config->family, Task::kQuestionAnswering)) {
      // HF splits the head's output into start and end logits: it must have two.
      if (config->num_labels() != 2) {
        return reader.Error("id2label", absl::StrCat(ArchitectureName(*config->family, Task::kQuestionAnswering),
                                                     " needs 2 labels (start, end), got ",
                                                     config->num_labels()));
      }
      config->task = Task::kQuestionAnswering;
      return absl::OkStatus();
    }
    if (list.is_array() && !list.empty() &&
        list[0].get<std::string>() == ArchitectureName(*config->family, Task::kSentenceEmbedding)) {
      config->task = Task::kSentenceEmbedding;
      return absl::OkStatus();
    }
  }
  const bool regression = config->problem_type.has_value()
                              ? *config->problem_type == "regression"
                              : config->num_labels() == 1;
  config->task = regression ? Task::kRegression : Task::kSequenceClassification;
  return absl::OkStatus();
}

absl::StatusOr<EncoderConfig> EncoderConfigFromJson(const json& object, const std::string& source) {
  if (!object.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": expected a JSON object at top level, got ", object.type_name()));
  }
  ConfigReader reader(object, source);
  EncoderConfig config;
  config.raw = object;
  XLMR_RETURN_IF_ERROR(ReadFields(reader, &config));
  XLMR_RETURN_IF_ERROR(CheckArchitectureKeys(reader, config));
  XLMR_RETURN_IF_ERROR(ReadFamily(reader, &config));
  XLMR_RETURN_IF_ERROR(CheckSizes(reader, config));
  XLMR_RETURN_IF_ERROR(CheckDropouts(reader, config));
  XLMR_RETURN_IF_ERROR(CheckTokenIds(reader, config));
  XLMR_RETURN_IF_ERROR(ReadLabels(reader, &config));
  XLMR_RETURN_IF_ERROR(ReadTask(reader, &config));
  return config;
}

absl::StatusOr<EncoderConfig> LoadEncoderConfig(const std::string& path) {
  XLMR_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  json object;
  try {
    object = json::parse(text);
  } catch (const json::exception& error) {  // parse_error, or out_of_range for a number like 1e9999
    return absl::InvalidArgumentError(absl::StrCat(path, ": not valid JSON: ", error.what()));
  }
  return EncoderConfigFromJson(object, path);
}

json EncoderConfigToJson(const EncoderConfig& config) {
  json out = config.raw.is_object() ? config.raw : json::object();
  out.erase("num_labels");
  out["architectures"] = json::array({ArchitectureName(*config.family, config.task)});
  out["model_type"] = config.family->model_type;
  out["position_embedding_type"] = "absolute";
  out["vocab_size"] = config.vocab_size;
  out["hidden_size"] = config.hidden_size;
  out["num_hidden_layers"] = config.num_hidden_layers;
  out["num_attention_heads"] = config.num_attention_heads;
  out["intermediate_size"] = config.intermediate_size;
  out["hidden_act"] = config.hidden_act;
  out["hidden_dropout_prob"] = config.hidden_dropout_prob;
  out["attention_probs_dropout_prob"] = config.attention_probs_dropout_prob;
  out["classifier_dropout"] =
      config.classifier_dropout.has_value() ? json(*config.classifier_dropout) : json(nullptr);
  out["max_position_embeddings"] = config.max_position_embeddings;
  out["type_vocab_size"] = config.type_vocab_size;
  out["layer_norm_eps"] = config.layer_norm_eps;
  out["pad_token_id"] = config.pad_token_id;
  out["bos_token_id"] = config.bos_token_id;
  out["eos_token_id"] = config.eos_token_id;
  out["initializer_range"] = config.initializer_range;
  json id2label = json::object();
  json label2id = json::object();
  for (const auto& [name, id] : config.label2id()) {
    id2label[absl::StrCat(id)] = name;
    label2id[name] = id;
  }
  out["id2label"] = std::move(id2label);
  out["label2id"] = std::move(label2id);
  // A token classifier has no problem_type (HF's class never sets it); one read from a
  // sequence classifier's config would only mislead.
  out["problem_type"] = config.task == Task::kRegression            ? json("regression")
                        : config.task == Task::kTokenClassification ? json(nullptr)
                        : config.task == Task::kQuestionAnswering   ? json(nullptr)
                        : config.task == Task::kSentenceEmbedding   ? json(nullptr)
                        : config.task == Task::kCrossEncoder        ? json(nullptr)
                        : config.problem_type.has_value()               ? json(*config.problem_type)
                                                                        : json(nullptr);
  return out;
}

absl::Status SaveEncoderConfig(const EncoderConfig& config, const std::string& path) {
  std::string text;
  try {
    text = EncoderConfigToJson(config).dump(2) + "\n";  // strict: a non-UTF-8 string throws
  } catch (const json::type_error& error) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": cannot write config (a label name is not UTF-8?): ", error.what()));
  }
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) return absl::PermissionDeniedError(absl::StrCat(temporary, ": cannot create"));
    file << text;
    file.close();
    if (!file) return absl::DataLossError(absl::StrCat(temporary, ": write failed"));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    return absl::PermissionDeniedError(
        absl::StrCat(path, ": cannot rename ", temporary, " into place"));
  }
  return absl::OkStatus();
}

std::optional<AttentionImplementation> ParseAttentionImplementation(const std::string& text) {
  if (text == "eager") return AttentionImplementation::kEager;
  if (text == "fused") return AttentionImplementation::kFused;
  return std::nullopt;
}

std::optional<Task> ParseTask(const std::string& text) {
  for (Task task : {Task::kSequenceClassification, Task::kRegression,
                        Task::kTokenClassification, Task::kQuestionAnswering, Task::kSentenceEmbedding,
                        Task::kCrossEncoder}) {
    if (text == TaskName(task)) return task;
  }
  return std::nullopt;
}

const char* TaskName(Task task) {
  switch (task) {
    case Task::kSequenceClassification: return "sequence_classification";
    case Task::kRegression: return "regression";
    case Task::kTokenClassification: return "token_classification";
    case Task::kQuestionAnswering: return "question_answering";
    case Task::kSentenceEmbedding: return "sentence_embedding";
    case Task::kCrossEncoder: return "cross_encoder";
  }
  return "?";
}

const char* ArchitectureName(const ModelFamily& family, Task task) {
  switch (task) {
    case Task::kTokenClassification: return family.class_names.token_classification;
    case Task::kQuestionAnswering: return family.class_names.question_answering;
    case Task::kSentenceEmbedding: return family.class_names.base_model;
    case Task::kSequenceClassification:
    case Task::kRegression:
    case Task::kCrossEncoder: break;
  }
  return family.class_names.sequence_classification;
}

}  // namespace xlmr::models
