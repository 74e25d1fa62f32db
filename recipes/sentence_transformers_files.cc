#include "recipes/sentence_transformers_files.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/io/durable_file.h"
#include "nlohmann/json.hpp"

namespace xlmr::recipes {
namespace {

using nlohmann::json;

json Modules() {
  return json::array({
      {{"idx", 0}, {"name", "0"}, {"path", ""}, {"type", "sentence_transformers.models.Transformer"}},
      {{"idx", 1}, {"name", "1"}, {"path", "1_Pooling"}, {"type", "sentence_transformers.models.Pooling"}},
  });
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
      {"modules.json", Modules()},
      {"sentence_bert_config.json", {{"max_seq_length", max_seq_length}, {"do_lower_case", false}}},
      {"1_Pooling/config.json", PoolingConfig(config)},
      {"config_sentence_transformers.json", SentenceTransformersConfig()},
  };
  std::vector<std::string> names;
  for (const auto& [name, content] : files) {
    XLMR_RETURN_IF_ERROR(io::WriteFileDurably(directory + "/" + name, content.dump(2) + "\n"));
    names.push_back(name);
  }
  return names;
}

}  // namespace xlmr::recipes
