#include "framework/data/label_map.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "framework/core/check.h"

namespace xlmr::data {
namespace {

constexpr size_t kMaxListedLabels = 20;

// "0", "42", "-3"; not "+3", "007", "-0", "1.0" or a value outside int64.
std::optional<int64_t> CanonicalInteger(const std::string& text) {
  int64_t value;
  if (!absl::SimpleAtoi(text, &value)) return std::nullopt;
  if (std::to_string(value) != text) return std::nullopt;
  return value;
}

// Sorts numerically when every label is a canonical integer, else by bytes (see header).
void SortLabels(std::vector<std::string>* labels) {
  std::vector<std::pair<int64_t, std::string>> numeric;
  for (const std::string& label : *labels) {
    std::optional<int64_t> value = CanonicalInteger(label);
    if (!value) {
      std::sort(labels->begin(), labels->end());
      return;
    }
    numeric.emplace_back(*value, label);
  }
  std::sort(numeric.begin(), numeric.end());
  for (size_t i = 0; i < numeric.size(); ++i) (*labels)[i] = std::move(numeric[i].second);
}

std::string ListLabels(const std::vector<std::string>& labels) {
  if (labels.size() <= kMaxListedLabels) return absl::StrJoin(labels, ", ");
  std::vector<std::string> head(labels.begin(), labels.begin() + kMaxListedLabels);
  return absl::StrCat(absl::StrJoin(head, ", "), ", ... (", labels.size(), " in all)");
}

}  // namespace

LabelMap::LabelMap(std::vector<std::string> id2label) : id2label_(std::move(id2label)) {
  for (size_t i = 0; i < id2label_.size(); ++i) label2id_[id2label_[i]] = static_cast<int32_t>(i);
  XLMR_CHECK_EQ(label2id_.size(), id2label_.size()) << "labels must be distinct";
}

absl::StatusOr<LabelMap> LabelMap::FromTrainingLabels(const std::vector<std::string>& labels,
                                                      const std::string& file) {
  if (labels.empty()) return absl::InvalidArgumentError(absl::StrCat(file, ": no labels"));
  const std::set<std::string> distinct(labels.begin(), labels.end());
  if (distinct.count("") > 0) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": a row has no label (--label_column)"));
  }
  if (distinct.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        file, ": every row has the label '", *distinct.begin(),
        "'; classification needs at least two distinct labels (check --label_column)"));
  }
  std::vector<std::string> sorted(distinct.begin(), distinct.end());
  SortLabels(&sorted);
  return LabelMap(std::move(sorted));
}

absl::StatusOr<LabelMap> LabelMap::FromTrainingRecords(const std::vector<Record>& records,
                                                       const std::string& file) {
  std::vector<std::string> labels;
  labels.reserve(records.size());
  for (const Record& record : records) {
    if (record.label.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ":", record.line, ": missing label (--label_column)"));
    }
    labels.push_back(record.label);
  }
  return FromTrainingLabels(labels, file);
}

absl::StatusOr<LabelMap> LabelMap::FromId2Label(std::vector<std::string> id2label,
                                                const std::string& source) {
  const std::set<std::string> distinct(id2label.begin(), id2label.end());
  if (distinct.size() != id2label.size() || distinct.count("") > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": id2label must hold distinct, non-empty labels, got [",
                     absl::StrJoin(id2label, ", "), "]"));
  }
  return LabelMap(std::move(id2label));
}

const std::string& LabelMap::label(int32_t id) const {
  XLMR_CHECK(id >= 0 && id < num_labels()) << "label id " << id << " of " << num_labels();
  return id2label_[id];
}

std::optional<int32_t> LabelMap::Find(absl::string_view label) const {
  const auto it = label2id_.find(label);
  if (it == label2id_.end()) return std::nullopt;
  return it->second;
}

absl::Status LabelMap::UnknownLabelError(const std::string& file, int64_t line,
                                         absl::string_view label, absl::string_view kind,
                                         absl::string_view flag) const {
  return absl::InvalidArgumentError(absl::StrCat(
      file, ":", line, ": ", kind, " '", label, "' does not occur in the training data (known ",
      kind, "s: ", ListLabels(id2label_), "); check ", flag));
}

absl::StatusOr<std::vector<int32_t>> MapLabels(const std::vector<Record>& records,
                                               const LabelMap& label_map, const std::string& file) {
  std::vector<int32_t> ids;
  ids.reserve(records.size());
  for (const Record& record : records) {
    if (record.label.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(file, ":", record.line, ": missing label (--label_column)"));
    }
    std::optional<int32_t> id = label_map.Find(record.label);
    if (!id) return label_map.UnknownLabelError(file, record.line, record.label);
    ids.push_back(*id);
  }
  return ids;
}

}  // namespace xlmr::data
