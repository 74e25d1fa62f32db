#include "framework/train/qa_prediction_files.h"

#include "framework/core/status_macros.h"
#include "framework/io/durable_file.h"
#include "nlohmann/json.hpp"

namespace xlmr::train {
namespace {

using nlohmann::ordered_json;

// json.dumps(value, indent=4) + "\n" (ensure_ascii, Python's default).
std::string PythonJson(const ordered_json& value) {
  return value.dump(4, ' ', /*ensure_ascii=*/true) + "\n";
}

ordered_json Candidate(const QaCandidate& c) {
  ordered_json entry;
  // The float32 values widen exactly, as Python's float(np.float32) does.
  if (c.placeholder) {  // HF builds this dict literally, text first
    entry["text"] = c.text;
    entry["start_logit"] = static_cast<double>(c.start_logit);
    entry["end_logit"] = static_cast<double>(c.end_logit);
  } else {
    entry["start_logit"] = static_cast<double>(c.start_logit);
    entry["end_logit"] = static_cast<double>(c.end_logit);
    entry["text"] = c.text;
  }
  entry["probability"] = static_cast<double>(c.probability);
  return entry;
}

}  // namespace

QaPredictionTexts QaPredictionFileTexts(const std::vector<QaPrediction>& predictions) {
  ordered_json answers = ordered_json::object();
  ordered_json nbest = ordered_json::object();
  ordered_json null_odds = ordered_json::object();
  bool has_null_odds = false;
  for (const QaPrediction& p : predictions) {
    answers[p.id] = p.answer;
    ordered_json list = ordered_json::array();
    for (const QaCandidate& c : p.nbest) list.push_back(Candidate(c));
    nbest[p.id] = std::move(list);
    if (p.null_odds.has_value()) {
      null_odds[p.id] = static_cast<double>(*p.null_odds);
      has_null_odds = true;
    }
  }
  return {PythonJson(answers), PythonJson(nbest), has_null_odds ? PythonJson(null_odds) : ""};
}

absl::StatusOr<std::vector<std::string>> WriteQaPredictionFiles(const std::string& directory,
                                                                const std::string& prefix,
                                                                const std::vector<QaPrediction>& predictions) {
  const QaPredictionTexts texts = QaPredictionFileTexts(predictions);
  std::vector<std::pair<std::string, const std::string*>> files = {
      {prefix + "predictions.json", &texts.predictions}, {prefix + "nbest_predictions.json", &texts.nbest}};
  if (!texts.null_odds.empty()) files.push_back({prefix + "null_odds.json", &texts.null_odds});
  std::vector<std::string> names;
  for (const auto& [name, text] : files) {
    XLMR_RETURN_IF_ERROR(io::WriteFileDurably(directory + "/" + name, *text));
    names.push_back(name);
  }
  return names;
}

}  // namespace xlmr::train
