#include "models/model_tokenizer.h"

#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "models/families.h"

namespace xlmr::models {
namespace {

// NotFound naming the first required file `directory` lacks.
absl::Status ExpectRequiredFiles(const std::string& directory, const ModelFamily& family) {
  for (const std::string& name : family.required_tokenizer_files) {
    const std::string path = directory + "/" + name;
    if (!std::filesystem::is_regular_file(path)) {
      return absl::NotFoundError(absl::StrCat(path, ": missing; a ", family.model_type,
                                              " model directory needs its tokenizer file ", name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ModelTokenizer> LoadModelTokenizer(const std::string& directory, const EncoderConfig& config) {
  const ModelFamily& family = *config.family;
  XLMR_RETURN_IF_ERROR(ExpectRequiredFiles(directory, family));
  ModelTokenizer loaded;
  XLMR_ASSIGN_OR_RETURN(loaded.tokenizer, family.load_tokenizer(directory, config.vocab_size));
  if (loaded.tokenizer->pad_id() != config.pad_token_id) {
    return absl::InvalidArgumentError(absl::StrCat(
        directory, "/config.json: pad_token_id is ", config.pad_token_id, ", the tokenizer's <pad> is ",
        loaded.tokenizer->pad_id()));
  }
  loaded.files = family.required_tokenizer_files;
  loaded.cache_tag = family.cache_tag;
  for (const std::string& name : family.optional_tokenizer_files) {
    if (std::filesystem::is_regular_file(directory + "/" + name)) loaded.files.push_back(name);
  }
  return loaded;
}

}  // namespace xlmr::models
