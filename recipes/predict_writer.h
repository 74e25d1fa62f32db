// xlmr_predict's output file (docs/CONTRACT.md): one JSON object per input row, in
// input order,
//   {"index": 0, "label": "de", "logits": [1.25, -0.5], "probabilities": [0.85, 0.15]}
// `index` is the 0-based row of the input file (header and blank lines not counted); `label`
// is id2label of the argmax. Logits are the model's fp32 values, printed with the fewest
// digits that read back (as float32) to the same value; probabilities are the float64
// softmax, printed with the fewest digits that read back (as float64) to the same value.
//
// The lines go to `<path>.tmp`, renamed onto `path` by Commit(): a run that fails or is
// interrupted never leaves a partial output file under the name the user asked for.
#ifndef XLMR_RECIPES_PREDICT_WRITER_H_
#define XLMR_RECIPES_PREDICT_WRITER_H_

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "framework/train/evaluate.h"

namespace xlmr::recipes {

// The JSON line (without the newline) of prediction `index`. Requires prediction.label to be
// an index of id2label.
std::string PredictionJsonLine(int64_t index, const train::Prediction& prediction,
                               const std::vector<std::string>& id2label);

class PredictionWriter {
 public:
  // Creates `path`.tmp. Error (naming --output_file): it cannot be created, e.g. the directory
  // does not exist.
  static absl::StatusOr<PredictionWriter> Open(const std::string& path, std::vector<std::string> id2label);

  PredictionWriter(PredictionWriter&& other) noexcept;
  PredictionWriter& operator=(PredictionWriter&&) = delete;
  // Removes `path`.tmp unless Commit() succeeded.
  ~PredictionWriter();

  // Appends one line per prediction; indices continue from the previous call.
  absl::Status Write(const std::vector<train::Prediction>& predictions);

  // Closes the temporary file and renames it onto `path`. Errors name the path.
  absl::Status Commit();

  int64_t lines_written() const { return next_index_; }

 private:
  PredictionWriter(std::string path, std::FILE* file, std::vector<std::string> id2label);
  std::string TemporaryPath() const { return path_ + ".tmp"; }

  std::string path_;
  std::FILE* file_;  // owned; nullptr once committed or moved from
  std::vector<std::string> id2label_;
  int64_t next_index_ = 0;
};

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_PREDICT_WRITER_H_
