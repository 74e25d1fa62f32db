// The mapping between label strings and class ids (config.json's id2label / label2id).
//
// The ids are the positions of the training file's distinct labels in sorted order, as
// Hugging Face's run_glue.py does (`label_list = sorted(unique labels)`):
//   - when every label is a canonical decimal integer ("0", "7", "-1"; no '+', no leading
//     zeros), they sort by numeric value, as pandas/datasets read such a column as integers:
//     labels 0..10 get ids 0..10, not the string order 0, 1, 10, 2, ...;
//   - otherwise they sort by byte order of their UTF-8 text, which equals Python's sorted()
//     on str (code point order).
// Classification needs at least two labels: Hugging Face treats num_labels == 1 as regression.
#ifndef XLMR_FRAMEWORK_DATA_LABEL_MAP_H_
#define XLMR_FRAMEWORK_DATA_LABEL_MAP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "framework/data/record_reader.h"

namespace xlmr::data {

class LabelMap {
 public:
  // The sorted distinct labels of `labels` (repeats allowed). `file` names the training file
  // in errors: no labels at all, an empty label, or fewer than two distinct labels.
  static absl::StatusOr<LabelMap> FromTrainingLabels(const std::vector<std::string>& labels,
                                                     const std::string& file);
  static absl::StatusOr<LabelMap> FromTrainingRecords(const std::vector<Record>& records,
                                                      const std::string& file);
  // Takes id2label as given (e.g. from a model's config.json): entries must be non-empty and
  // distinct; `source` names where they came from in errors.
  static absl::StatusOr<LabelMap> FromId2Label(std::vector<std::string> id2label,
                                               const std::string& source);

  int32_t num_labels() const { return static_cast<int32_t>(id2label_.size()); }
  const std::vector<std::string>& id2label() const { return id2label_; }
  const std::string& label(int32_t id) const;  // id in [0, num_labels())
  std::optional<int32_t> Find(absl::string_view label) const;

  // The error for a label this map does not know, naming the file, the line, the label and
  // the known labels (at most the first 20). `kind` and `flag` say what a label is called and
  // which flag chooses it ("tag", "--tags_column" for token classification).
  absl::Status UnknownLabelError(const std::string& file, int64_t line, absl::string_view label,
                                 absl::string_view kind = "label",
                                 absl::string_view flag = "--label_column") const;

 private:
  explicit LabelMap(std::vector<std::string> id2label);

  std::vector<std::string> id2label_;
  absl::flat_hash_map<std::string, int32_t> label2id_;
};

// The id of every record's label, in record order. `file` names the records' file in errors:
// a record without a label, or with a label `label_map` does not know.
absl::StatusOr<std::vector<int32_t>> MapLabels(const std::vector<Record>& records,
                                               const LabelMap& label_map, const std::string& file);

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_LABEL_MAP_H_
