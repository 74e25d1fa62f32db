#include "recipes/cross_encoder_files.h"

#include "framework/core/status_macros.h"
#include "framework/io/durable_file.h"
#include "framework/io/whole_file.h"
#include "nlohmann/json.hpp"

namespace xlmr::recipes {
namespace {

constexpr char kFileName[] = "config_sentence_transformers.json";

}  // namespace

absl::StatusOr<std::vector<std::string>> WriteCrossEncoderFiles(const std::string& directory) {
  const nlohmann::ordered_json config = {{"activation_fn", "torch.nn.modules.activation.Sigmoid"},
                                         {"default_prompt_name", nullptr},
                                         {"model_type", "CrossEncoder"},
                                         {"prompts", nlohmann::ordered_json::object()}};
  XLMR_RETURN_IF_ERROR(io::WriteFileDurably(directory + "/" + kFileName, config.dump(2) + "\n"));
  return std::vector<std::string>{kFileName};
}

models::Task TaskOfModelDirectory(const std::string& directory, models::Task config_task) {
  if (config_task != models::Task::kRegression) return config_task;
  const absl::StatusOr<std::string> text = io::ReadWholeFile(directory + "/" + kFileName);
  if (!text.ok()) return config_task;
  const nlohmann::json config = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  const bool cross_encoder = config.is_object() && config.contains("model_type") &&
                             config["model_type"] == "CrossEncoder";
  return cross_encoder ? models::Task::kCrossEncoder : config_task;
}

}  // namespace xlmr::recipes
