#include "recipes/predict_writer.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "framework/core/check.h"
#include "framework/core/status_macros.h"
#include "nlohmann/json.hpp"

namespace xlmr::recipes {
namespace {

// The float32 `value`'s shortest decimal spelling, as torch prints a float32 tensor ("0.1",
// not "0.10000000149011612"), which reads back as float32 to exactly `value`; "null" for inf
// and NaN (JSON has neither). Written by us, not by nlohmann: its Grisu2 printing of the
// double nearest that spelling round-trips but is not always the shortest (0.01007934 came out
// as 0.010079339999999999).
std::string ShortestFloatJson(double value) {
  const float f = static_cast<float>(value);
  if (!std::isfinite(f)) return "null";
  for (int digits = 1; digits < std::numeric_limits<float>::max_digits10; ++digits) {
    const std::string text = absl::StrFormat("%.*g", digits, f);
    if (std::strtof(text.c_str(), nullptr) == f) return text;
  }
  return absl::StrFormat("%.*g", std::numeric_limits<float>::max_digits10, f);  // always reads back
}

// A JSON array of ShortestFloatJson numbers.
std::string ShortestFloatsJson(const std::vector<double>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) absl::StrAppend(&out, i ? "," : "", ShortestFloatJson(values[i]));
  return out + "]";
}

}  // namespace

std::string PredictionJsonLine(int64_t index, const train::Prediction& prediction,
                               const std::vector<std::string>& id2label, train::Objective objective,
                               const std::vector<std::string>& words) {
  auto name = [&](int32_t id) -> const std::string& {
    XLMR_CHECK(id >= 0 && id < static_cast<int32_t>(id2label.size())) << "label id " << id;
    return id2label[id];
  };
  if (objective == train::Objective::kRegression) {
    return absl::StrCat("{\"index\":", index, ",\"prediction\":",
                        ShortestFloatJson(prediction.logits.at(0)), "}");
  }
  if (objective == train::Objective::kBinaryLogits) {  // CrossEncoder.predict's sigmoid of the logit, in float
    const float logit = prediction.logits.at(0);
    const float score = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(logit))));
    return absl::StrCat("{\"index\":", index, ",\"score\":", ShortestFloatJson(score), "}");
  }
  nlohmann::ordered_json line;
  line["index"] = index;
  if (objective == train::Objective::kPerToken) {
    XLMR_CHECK_LE(prediction.word_labels.size(), words.size());
    nlohmann::ordered_json labels = nlohmann::ordered_json::array();
    for (size_t w = 0; w < words.size(); ++w) {
      labels.push_back(w < prediction.word_labels.size() ? nlohmann::ordered_json(name(prediction.word_labels[w]))
                                                         : nlohmann::ordered_json(nullptr));
    }
    line["words"] = words;
    line["labels"] = std::move(labels);
    return line.dump();
  }
  line["label"] = name(prediction.label);
  // The logits as their shortest float32 spellings, spliced after nlohmann's part of the line.
  const std::string head = line.dump();  // {"index":...,"label":"..."}
  return absl::StrCat(head.substr(0, head.size() - 1), ",\"logits\":",
                      ShortestFloatsJson(prediction.logits), ",\"probabilities\":",
                      nlohmann::json(prediction.probabilities).dump(), "}");
}

absl::StatusOr<PredictionWriter> PredictionWriter::Open(const std::string& path,
                                                        std::vector<std::string> id2label,
                                                        train::Objective objective) {
  XLMR_ASSIGN_OR_RETURN(StagedOutputFile file, StagedOutputFile::Open(path));
  return PredictionWriter(std::move(file), std::move(id2label), objective);
}

absl::Status PredictionWriter::Write(const std::vector<train::Prediction>& predictions,
                                     absl::Span<const data::TaggedSentence> sentences) {
  const bool per_token = objective_ == train::Objective::kPerToken;
  XLMR_CHECK(!per_token || sentences.size() == predictions.size()) << "one sentence per prediction";
  static const std::vector<std::string> kNoWords;
  for (size_t i = 0; i < predictions.size(); ++i) {
    XLMR_RETURN_IF_ERROR(file_.Write(PredictionJsonLine(next_index_++, predictions[i], id2label_, objective_,
                                                        per_token ? sentences[i].words : kNoWords) + "\n"));
  }
  return absl::OkStatus();
}

}  // namespace xlmr::recipes
