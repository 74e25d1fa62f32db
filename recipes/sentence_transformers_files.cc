#include "recipes/sentence_transformers_files.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/io/durable_file.h"
#include "framework/io/whole_file.h"
#include "nlohmann/json.hpp"

namespace xlmr::recipes {
namespace {

using nlohmann::json;

json Modules(const models::EncoderConfig& config) {
  json modules = json::array({
      {{"idx", 0}, {"name", "0"}, {"path", ""}, {"type", "sentence_transformers.models.Transformer"}},
      {{"idx", 1}, {"name", "1"}, {"path", "1_Pooling"}, {"type", "sentence_transformers.models.Pooling"}},
  });
  if (config.normalize_embeddings) {
    modules.push_back({{"idx", 2}, {"name", "2"}, {"path", "2_Normalize"}, {"type", "sentence_transformers.models.Normalize"}});
  }
  return modules;
}

absl::Status Bad(const std::string& path, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", what));
}

absl::StatusOr<json> ReadJson(const std::string& path) {
  XLMR_ASSIGN_OR_RETURN(const std::string text, io::ReadWholeFile(path));
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return Bad(path, "not valid JSON");
  return value;
}

// The module's class name: the last part of its dotted type (both the long-standing
// sentence_transformers.models.Pooling and the newer module paths).
std::string ModuleClass(const json& module) {
  if (!module.is_object() || !module.contains("type") || !module["type"].is_string()) return "";
  const std::string type = module["type"].get<std::string>();
  return type.substr(type.rfind('.') + 1);
}

absl::StatusOr<models::SentencePooling> ReadPooling(const std::string& path) {
  XLMR_ASSIGN_OR_RETURN(const json config, ReadJson(path));
  if (!config.is_object()) return Bad(path, "expected a JSON object");
  if (config.contains("pooling_mode")) {
    const json& mode = config["pooling_mode"];
    if (mode == "mean") return models::SentencePooling::kMean;
    if (mode == "cls") return models::SentencePooling::kCls;
    return Bad(path, absl::StrCat("pooling_mode ", mode.dump(), ": only mean and cls pooling are supported"));
  }
  std::vector<std::string> on;
  for (const auto& [key, value] : config.items()) {
    if (key.rfind("pooling_mode_", 0) == 0 && value == true) on.push_back(key);
  }
  if (on == std::vector<std::string>{"pooling_mode_mean_tokens"}) return models::SentencePooling::kMean;
  if (on == std::vector<std::string>{"pooling_mode_cls_token"}) return models::SentencePooling::kCls;
  return Bad(path, "expected exactly one of pooling_mode_mean_tokens and pooling_mode_cls_token true "
                   "(only mean and cls pooling are supported)");
}

json PoolingConfig(const models::EncoderConfig& config) {
  const bool mean = config.pooling == models::SentencePooling::kMean;
  return {{"word_embedding_dimension", config.hidden_size},
          {"pooling_mode_cls_token", !mean},
          {"pooling_mode_mean_tokens", mean},
          {"pooling_mode_max_tokens", false},
          {"pooling_mode_mean_sqrt_len_tokens", false},
          {"pooling_mode_weightedmean_tokens", false},
          {"pooling_mode_lasttoken", false},
          {"include_prompt", true}};
}

// What the trained similarity is (the loss's cos_sim); no prompts.
json SentenceTransformersConfig() {
  return {{"model_type", "SentenceTransformer"},
          {"prompts", json::object()},
          {"default_prompt_name", nullptr},
          {"similarity_fn_name", "cosine"}};
}

}  // namespace

absl::StatusOr<std::vector<std::string>> WriteSentenceTransformersFiles(const std::string& directory,
                                                                        const models::EncoderConfig& config,
                                                                        int max_seq_length) {
  std::error_code error;
  std::filesystem::create_directories(directory + "/1_Pooling", error);
  if (error) {
    return absl::PermissionDeniedError(absl::StrCat(directory, "/1_Pooling: cannot create directory: ", error.message()));
  }
  const std::vector<std::pair<std::string, json>> files = {
      {"modules.json", Modules(config)},
      {"sentence_bert_config.json", {{"max_seq_length", max_seq_length}, {"do_lower_case", false}}},
      {"1_Pooling/config.json", PoolingConfig(config)},
      {"config_sentence_transformers.json", SentenceTransformersConfig()},
  };
  std::vector<std::string> names;
  if (config.normalize_embeddings) {
    std::filesystem::create_directories(directory + "/2_Normalize", error);
    if (error) {
      return absl::PermissionDeniedError(absl::StrCat(directory, "/2_Normalize: cannot create directory: ", error.message()));
    }
  }
  for (const auto& [name, content] : files) {
    XLMR_RETURN_IF_ERROR(io::WriteFileDurably(directory + "/" + name, content.dump(2) + "\n"));
    names.push_back(name);
  }
  return names;
}

absl::StatusOr<SentenceTransformersModules> ReadSentenceTransformersModules(const std::string& directory) {
  const std::string path = directory + "/modules.json";
  SentenceTransformersModules modules;
  if (!std::filesystem::exists(path)) return modules;
  XLMR_ASSIGN_OR_RETURN(const json list, ReadJson(path));
  if (!list.is_array() || list.empty() || ModuleClass(list[0]) != "Transformer") {
    return Bad(path, "expected a list of modules starting with a Transformer");
  }
  bool pooled = false;
  for (size_t i = 1; i < list.size(); ++i) {
    const std::string module = ModuleClass(list[i]);
    if (module == "Pooling" && !pooled && list[i].contains("path") && list[i]["path"].is_string()) {
      XLMR_ASSIGN_OR_RETURN(modules.pooling,
                            ReadPooling(absl::StrCat(directory, "/", list[i]["path"].get<std::string>(), "/config.json")));
      pooled = true;
    } else if (module == "Normalize" && pooled && !modules.normalize) {
      modules.normalize = true;
    } else {
      return Bad(path, absl::StrCat("module ", i, " (", list[i].dump(), "): only Transformer, Pooling and Normalize, "
                                    "in that order, are supported"));
    }
  }
  if (!pooled) return Bad(path, "no Pooling module");
  return modules;
}

}  // namespace xlmr::recipes
