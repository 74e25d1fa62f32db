#include "recipes/qa_predict.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "framework/core/status_macros.h"
#include "framework/distributed/local_communicator.h"
#include "framework/io/durable_file.h"
#include "framework/train/qa_evaluate.h"
#include "framework/train/qa_prediction_files.h"
#include "nlohmann/json.hpp"

namespace xlmr::recipes {
namespace {

// run_qa's name for the figures of a prediction: "predict_<metric>" (trainer.save_metrics("predict")).
constexpr char kPredictPrefix[] = "predict_";
constexpr char kPredictResultsFile[] = "predict_results.json";

absl::Status MakeOutputDirectory(const std::string& directory) {
  std::error_code error;
  const bool created = std::filesystem::create_directories(directory, error);
  if (error) return absl::DataLossError(absl::StrCat(directory, ": cannot create the directory: ", error.message()));
  if (created) return io::SyncParentDirectory(directory);  // the new directory's name survives a power loss
  return absl::OkStatus();
}

// predict_results.json: the figures, then predict_examples, as eval_results.json prints its own.
std::string PredictResultsText(const std::vector<std::pair<std::string, double>>& figures, int64_t questions) {
  nlohmann::ordered_json results;
  for (const auto& [name, value] : figures) results[name] = value;
  results[absl::StrCat(kPredictPrefix, "examples")] = questions;
  return results.dump(2) + "\n";
}

// Files of an earlier prediction into the same directory that this one does not write.
absl::Status RemoveStaleFiles(const std::string& directory, const std::vector<std::string>& written) {
  for (const char* name : {"null_odds.json", kPredictResultsFile}) {
    if (std::find(written.begin(), written.end(), name) != written.end()) continue;
    std::error_code error;
    std::filesystem::remove(directory + "/" + name, error);
    if (error) return absl::DataLossError(absl::StrCat(directory, "/", name, ": cannot remove it: ", error.message()));
  }
  return io::SyncDirectory(directory);
}

}  // namespace

absl::StatusOr<QaFile> ReadQaInput(const QaPredictOptions& options, const models::TextTokenizer& tokenizer) {
  QaFileOptions file;
  file.answers = data::QaAnswers::kOptional;
  file.version_2_with_negative = options.qa.postprocess.version_2_with_negative;
  file.features = options.qa.features;
  return ReadQaFile(options.input_file, file, tokenizer);
}

absl::StatusOr<QaPredictSummary> AnswerQuestions(train::TrainableModel& model, const QaFile& input,
                                                 const QaPredictOptions& options) {
  train::EvalSettings settings = options.eval;
  settings.objective = train::Objective::kSpanStartEnd;
  distributed::LocalCommunicator one_process;
  const train::QaEvalResult answered = train::EvaluateQa(
      model, {&input.examples, &input.windows, &input.dataset}, one_process, settings, options.qa.postprocess);
  QaPredictSummary summary;
  summary.questions = static_cast<int64_t>(answered.predictions.size());
  for (const auto& [name, value] : answered.result.metrics) summary.figures.push_back({kPredictPrefix + name, value});

  XLMR_RETURN_IF_ERROR(MakeOutputDirectory(options.output_dir));
  XLMR_ASSIGN_OR_RETURN(summary.files, train::WriteQaPredictionFiles(options.output_dir, "", answered.predictions));
  if (!summary.figures.empty()) {
    XLMR_RETURN_IF_ERROR(io::WriteFileDurably(options.output_dir + "/" + kPredictResultsFile,
                                              PredictResultsText(summary.figures, summary.questions)));
    summary.files.push_back(kPredictResultsFile);
  }
  XLMR_RETURN_IF_ERROR(RemoveStaleFiles(options.output_dir, summary.files));
  return summary;
}

}  // namespace xlmr::recipes
