// xlmr_predict's output file (docs/CONTRACT.md): one JSON object per input row (a sentence
// for token classification), in input order, by the model's task:
//   sequence classification  {"index": 0, "label": "de", "logits": [1.25, -0.5],
//                             "probabilities": [0.85, 0.15]}
//   regression               {"index": 0, "prediction": 3.25}
//   token classification     {"index": 0, "words": ["Hallo", "world"], "labels": ["B-de", "B-en"]}
// `index` is the 0-based row (sentence) of the input file (header and blank lines not
// counted); `label` is id2label of the argmax. Logits and a regression's prediction are the
// model's fp32 values, printed with the fewest digits that read back (as float32) to the same
// value; probabilities are the float64 softmax, printed with the fewest digits that read back
// (as float64) to the same value. Token classification gives one label per word: id2label of
// the argmax at the word's first sub-token, or null for a word --max_seq_length cut off.
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
#include "absl/types/span.h"
#include "framework/data/tagged_sentence_reader.h"
#include "framework/train/evaluate.h"
#include "recipes/staged_output_file.h"

namespace xlmr::recipes {

// The JSON line (without the newline) of prediction `index`. Requires prediction.label (and
// every word label) to be an index of id2label; `words` is the sentence's words for
// kPerToken (ignored otherwise).
std::string PredictionJsonLine(int64_t index, const train::Prediction& prediction,
                               const std::vector<std::string>& id2label, train::Objective objective,
                               const std::vector<std::string>& words = {});

class PredictionWriter {
 public:
  // Creates `path`.tmp (StagedOutputFile). Error (naming --output_file): it cannot be created,
  // e.g. the directory does not exist.
  static absl::StatusOr<PredictionWriter> Open(const std::string& path, std::vector<std::string> id2label,
                                               train::Objective objective);

  // Appends one line per prediction; indices continue from the previous call. For kPerToken,
  // `sentences` holds the predictions' input sentences, one each, in order.
  absl::Status Write(const std::vector<train::Prediction>& predictions,
                     absl::Span<const data::TaggedSentence> sentences = {});

  // Closes the temporary file and renames it onto `path`. Errors name the path.
  absl::Status Commit() { return file_.Commit(); }

  int64_t lines_written() const { return next_index_; }

 private:
  PredictionWriter(StagedOutputFile file, std::vector<std::string> id2label, train::Objective objective)
      : file_(std::move(file)), id2label_(std::move(id2label)), objective_(objective) {}

  StagedOutputFile file_;
  std::vector<std::string> id2label_;
  train::Objective objective_;
  int64_t next_index_ = 0;
};

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_PREDICT_WRITER_H_
