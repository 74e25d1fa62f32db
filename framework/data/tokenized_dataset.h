// A tokenized data file: per example its token ids, its label and the line it came from.
//
// The arrays are flat (the token cache's layout): example i is
// token_ids[offsets[i], offsets[i + 1]). They either live in a memory-mapped cache file
// (token_cache.h) or in vectors this object owns (FromColumns). Copies are cheap and share the
// arrays, which are immutable; the label ids are per copy.
//
// Labels are stored as strings (an index into label_names(), the file's distinct labels), not
// as ids, because ids depend on the *training* file's label set: a cache keyed on this file
// alone stays valid when another file changes. AssignLabelIds maps them through a LabelMap
// once the training labels are known; label(i) is valid only after it.
//
// Token-level data (token classification, framework/data/word_labels.h) adds two columns
// parallel to token_ids: token_label_index (the index into label_names of the tag of the word
// a token starts, on the word's FIRST sub-token only; -1 on every other token and when the
// sentence has no tags) and word_index (the word a token starts, -1 elsewhere). Both are empty
// for sentence-level data, whose label_index then holds the labels; token-level data has
// label_index -1 everywhere. Token-level data is tokenized in memory on every run: the token
// cache (token_cache.h) stores sentence-level data only and its file format is unchanged.
#ifndef XLMR_FRAMEWORK_DATA_TOKENIZED_DATASET_H_
#define XLMR_FRAMEWORK_DATA_TOKENIZED_DATASET_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "framework/data/label_map.h"

namespace xlmr::data {

// The owned form of a tokenized file (what the token cache writes and reads).
struct TokenizedColumns {
  std::vector<int64_t> offsets{0};       // [N + 1], offsets[0] == 0, non-decreasing
  std::vector<int32_t> token_ids;        // [offsets[N]]
  std::vector<int64_t> lines;            // [N], 1-based source line of each example
  std::vector<int32_t> label_index;      // [N], index into label_names, -1 = no label
  std::vector<std::string> label_names;  // distinct, non-empty, sorted by bytes
  // Token-level data only (both empty, or both [offsets[N]]):
  std::vector<int32_t> token_label_index;  // index into label_names; -1 = no label here
  std::vector<int32_t> word_index;         // the word a token starts; -1 = starts none
};

class TokenizedDataset {
 public:
  // Views into memory kept alive by `owner` (e.g. a mapped file); the spans must satisfy the
  // TokenizedColumns invariants (checked: sizes and offsets; the cache validates first).
  struct Views {
    absl::Span<const int64_t> offsets;
    absl::Span<const int32_t> token_ids;
    absl::Span<const int64_t> lines;
    absl::Span<const int32_t> label_index;
    std::vector<std::string> label_names;
    absl::Span<const int32_t> token_label_index;  // empty for sentence-level data
    absl::Span<const int32_t> word_index;         // empty for sentence-level data
  };
  TokenizedDataset(std::string file, std::shared_ptr<const void> owner, Views views);
  // Takes ownership of the columns (which must satisfy the invariants above).
  static TokenizedDataset FromColumns(std::string file, TokenizedColumns columns);

  // The data file these examples came from, as named in messages.
  const std::string& file() const { return file_; }
  int64_t size() const { return static_cast<int64_t>(views_.lines.size()); }
  absl::Span<const int32_t> example(int64_t i) const;  // token ids incl. special tokens
  int64_t num_tokens(int64_t i) const { return views_.offsets[i + 1] - views_.offsets[i]; }
  int64_t total_tokens() const { return views_.offsets.back(); }
  int64_t line(int64_t i) const { return views_.lines[i]; }
  // The distinct labels of this file, sorted by bytes (not the id order).
  const std::vector<std::string>& label_names() const { return views_.label_names; }
  // Example i's label string, or nullopt when the file gave it none.
  std::optional<std::string> label_name(int64_t i) const;

  // Gives every example the id of its label. Errors (naming the file and the line): an
  // example without a label, or a label `label_map` does not know.
  absl::Status AssignLabelIds(const LabelMap& label_map);
  bool has_label_ids() const { return has_label_ids_; }
  int32_t label(int64_t i) const;  // after AssignLabelIds

  // Token-level data (token_label_index and word_index present; see the file comment).
  bool has_token_labels() const { return !views_.word_index.empty(); }
  // Example i's per-token tag indices into label_names() (-1: no tag on this token).
  absl::Span<const int32_t> token_label_index(int64_t i) const;
  // Example i's per-token word index (-1 on special tokens and later sub-tokens of a word).
  // A word with no entry got no token: it was cut off by truncation, or the tokenizer spelled
  // it with no piece; it has no prediction.
  absl::Span<const int32_t> word_index(int64_t i) const;

  // Gives every token its label id: the id of its tag on a word's first sub-token, kIgnored
  // (-100, the loss's ignore_index as in Hugging Face) on every other token. Errors (naming
  // the file and the sentence's line): a word-starting token without a tag (a sentence of a
  // file read without tags), or a tag `label_map` does not know. Requires has_token_labels().
  absl::Status AssignTokenLabelIds(const LabelMap& label_map);
  bool has_token_label_ids() const { return has_token_label_ids_; }
  // Example i's per-token label ids, after AssignTokenLabelIds.
  absl::Span<const int32_t> token_labels(int64_t i) const;
  static constexpr int32_t kIgnored = -100;

  // Regression and scored pairs: reads every example's label as a finite decimal number (HF's
  // run_glue reads a float label column, sentence-transformers a float score column; the value
  // is rounded to float, as torch's float32 labels). Errors
  // (naming the file and the line): an example without a label, or one that is not a finite
  // number.
  absl::Status AssignRegressionTargets();
  bool has_targets() const { return has_targets_; }
  float target(int64_t i) const;  // after AssignRegressionTargets

  // Question answering: each example (a window, framework/data/qa_features.h) gets the token
  // indices where its answer starts and ends (both 0, <s>, when the window holds none).
  // Requires starts.size() == ends.size() == size() and 0 <= start, end < num_tokens(i).
  void AssignSpanLabels(std::vector<int32_t> starts, std::vector<int32_t> ends);
  bool has_span_labels() const { return has_span_labels_; }
  int32_t span_start(int64_t i) const;  // after AssignSpanLabels
  int32_t span_end(int64_t i) const;

 private:
  std::string file_;
  std::shared_ptr<const void> owner_;
  Views views_;
  std::vector<int32_t> label_ids_;  // [N] once assigned
  bool has_label_ids_ = false;
  std::vector<int32_t> token_label_ids_;  // [total_tokens()] once assigned
  bool has_token_label_ids_ = false;
  std::vector<float> targets_;      // [N] once assigned
  bool has_targets_ = false;
  std::vector<int32_t> span_starts_, span_ends_;  // [N] each once assigned
  bool has_span_labels_ = false;
};

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_TOKENIZED_DATASET_H_
