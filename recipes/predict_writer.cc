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

absl::Status OutputError(const std::string& path, const std::string& what) {
  return absl::PermissionDeniedError(absl::StrCat("--output_file=", path, ": ", what, ": ", std::strerror(errno)));
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
  std::FILE* file = std::fopen((path + ".tmp").c_str(), "w");
  if (file == nullptr) return OutputError(path, absl::StrCat("cannot create ", path, ".tmp"));
  return PredictionWriter(path, file, std::move(id2label), objective);
}

PredictionWriter::PredictionWriter(std::string path, std::FILE* file, std::vector<std::string> id2label,
                                   train::Objective objective)
    : path_(std::move(path)), file_(file), id2label_(std::move(id2label)), objective_(objective) {}

PredictionWriter::PredictionWriter(PredictionWriter&& other) noexcept
    : path_(std::move(other.path_)),
      file_(other.file_),
      id2label_(std::move(other.id2label_)),
      objective_(other.objective_),
      next_index_(other.next_index_) {
  other.file_ = nullptr;
}

PredictionWriter::~PredictionWriter() {
  if (file_ == nullptr) return;
  std::fclose(file_);
  std::error_code ignored;  // best effort: the run is failing already
  std::filesystem::remove(TemporaryPath(), ignored);
}

absl::Status PredictionWriter::Write(const std::vector<train::Prediction>& predictions,
                                     absl::Span<const data::TaggedSentence> sentences) {
  XLMR_CHECK(file_ != nullptr);
  const bool per_token = objective_ == train::Objective::kPerToken;
  XLMR_CHECK(!per_token || sentences.size() == predictions.size()) << "one sentence per prediction";
  static const std::vector<std::string> kNoWords;
  for (size_t i = 0; i < predictions.size(); ++i) {
    const std::string line =
        PredictionJsonLine(next_index_++, predictions[i], id2label_, objective_,
                           per_token ? sentences[i].words : kNoWords) + "\n";
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size()) {
      return OutputError(path_, absl::StrCat("cannot write ", TemporaryPath()));
    }
  }
  return absl::OkStatus();
}

absl::Status PredictionWriter::Commit() {
  XLMR_CHECK(file_ != nullptr);
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!closed || std::rename(TemporaryPath().c_str(), path_.c_str()) != 0) {
    const absl::Status error = OutputError(path_, absl::StrCat("cannot finish ", TemporaryPath()));
    std::error_code ignored;
    std::filesystem::remove(TemporaryPath(), ignored);
    return error;
  }
  return absl::OkStatus();
}

}  // namespace xlmr::recipes
