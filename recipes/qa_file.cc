#include "recipes/qa_file.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/data/qa_dataset.h"
#include "recipes/tokenize_fn.h"

namespace xlmr::recipes {
namespace {

// Training and evaluation data without --version_2_with_negative: every question answerable.
absl::Status ExpectEveryExampleAnswered(const std::vector<data::QaExample>& examples) {
  for (const data::QaExample& example : examples) {
    if (example.answers.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          example.where, ": id '", example.id, "': no answer; unanswerable questions need "
          "--version_2_with_negative"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<QaFile> ReadQaFile(const std::string& path, const QaFileOptions& options,
                                  const models::TextTokenizer& tokenizer) {
  XLMR_ASSIGN_OR_RETURN(std::vector<data::QaExample> examples, data::ReadQaExamples(path, options.answers));
  if (options.answers == data::QaAnswers::kRequired && !options.version_2_with_negative) {
    XLMR_RETURN_IF_ERROR(ExpectEveryExampleAnswered(examples));
  }
  data::QaFeatureOptions features = options.features;
  features.bos_id = tokenizer.bos_id();
  features.pair_separators = tokenizer.special_tokens_pair() - 2;
  features.eos_id = tokenizer.eos_id();
  XLMR_ASSIGN_OR_RETURN(std::vector<data::QaFeature> windows,
                        data::PrepareQaFeatures(examples, MakeTokenizeWithSpansFn(tokenizer), features));
  data::TokenizedDataset dataset = data::MakeQaDataset(path, examples, windows);
  return QaFile{std::move(examples), std::move(windows), std::move(dataset)};
}

}  // namespace xlmr::recipes
