#include "recipes/embedded_default.h"

#include <fstream>

#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"

namespace xlmr::recipes {
namespace {

// The preset value as flag text: strings as they are, numbers and booleans as JSON prints them.
std::string FlagText(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

std::set<std::string> FlagsGiven(const std::vector<std::string>& arguments) {
  std::set<std::string> given;
  for (const std::string& argument : arguments) {
    absl::string_view arg = argument;
    if (arg == "--") break;  // positional arguments follow
    if (!absl::ConsumePrefix(&arg, "--") && !absl::ConsumePrefix(&arg, "-")) continue;
    std::string name(arg.substr(0, arg.find('=')));
    if (absl::FindCommandLineFlag(name) == nullptr && absl::StartsWith(name, "no")) name = name.substr(2);
    given.insert(name);
  }
  return given;
}

bool IsEmbeddedDefaultRun(const std::set<std::string>& given) {
  return given.count("model_dir") == 0 && given.count("train_file") == 0;
}

absl::StatusOr<std::vector<std::string>> ApplyEmbeddedTrainingArgs(const std::string& preset_path,
                                                                   const std::set<std::string>& given) {
  std::ifstream in(preset_path);
  if (!in) return absl::NotFoundError(absl::StrCat(preset_path, ": cannot open"));
  const nlohmann::json preset = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!preset.is_object()) return absl::InvalidArgumentError(absl::StrCat(preset_path, ": expected a JSON object"));
  std::vector<std::string> applied;
  for (const auto& [name, value] : preset.items()) {
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(preset_path, ": '", name, "' is not a flag of xlmr_finetune"));
    }
    if (given.count(name) > 0) continue;
    std::string error;
    if (!flag->ParseFrom(FlagText(value), &error)) {
      return absl::InvalidArgumentError(absl::StrCat(preset_path, ": '", name, "': ", error));
    }
    applied.push_back(absl::StrCat(name, "=", FlagText(value)));
  }
  return applied;
}

}  // namespace xlmr::recipes
