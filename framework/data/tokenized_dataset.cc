#include "framework/data/tokenized_dataset.h"

#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "framework/core/check.h"

namespace xlmr::data {

TokenizedDataset::TokenizedDataset(std::string file, std::shared_ptr<const void> owner, Views views)
    : file_(std::move(file)), owner_(std::move(owner)), views_(std::move(views)) {
  const size_t n = views_.lines.size();
  XLMR_CHECK_EQ(views_.offsets.size(), n + 1);
  XLMR_CHECK_EQ(views_.label_index.size(), n);
  XLMR_CHECK_EQ(views_.offsets.front(), 0);
  XLMR_CHECK_EQ(static_cast<size_t>(views_.offsets.back()), views_.token_ids.size());
  const auto num_names = static_cast<int32_t>(views_.label_names.size());
  for (size_t i = 0; i < n; ++i) {
    XLMR_CHECK_LE(views_.offsets[i], views_.offsets[i + 1]) << "at example " << i;
    XLMR_CHECK(views_.label_index[i] >= -1 && views_.label_index[i] < num_names)
        << "label index " << views_.label_index[i] << " of example " << i;
  }
  XLMR_CHECK_EQ(views_.token_label_index.size(), views_.word_index.size());
  if (!views_.word_index.empty()) {
    XLMR_CHECK_EQ(views_.word_index.size(), views_.token_ids.size());
    for (size_t t = 0; t < views_.word_index.size(); ++t) {
      XLMR_CHECK(views_.token_label_index[t] >= -1 && views_.token_label_index[t] < num_names)
          << "token label index " << views_.token_label_index[t] << " of token " << t;
      XLMR_CHECK(views_.word_index[t] >= -1) << "word index " << views_.word_index[t] << " of token " << t;
    }
  }
}

TokenizedDataset TokenizedDataset::FromColumns(std::string file, TokenizedColumns columns) {
  auto owned = std::make_shared<TokenizedColumns>(std::move(columns));
  Views views;
  views.offsets = owned->offsets;
  views.token_ids = owned->token_ids;
  views.lines = owned->lines;
  views.label_index = owned->label_index;
  views.label_names = owned->label_names;
  views.token_label_index = owned->token_label_index;
  views.word_index = owned->word_index;
  return TokenizedDataset(std::move(file), std::move(owned), std::move(views));
}

absl::Span<const int32_t> TokenizedDataset::example(int64_t i) const {
  XLMR_CHECK(i >= 0 && i < size()) << "example " << i << " of " << size();
  return views_.token_ids.subspan(views_.offsets[i], num_tokens(i));
}

std::optional<std::string> TokenizedDataset::label_name(int64_t i) const {
  const int32_t index = views_.label_index[i];
  if (index < 0) return std::nullopt;
  return views_.label_names[index];
}

absl::Status TokenizedDataset::AssignLabelIds(const LabelMap& label_map) {
  // Map each distinct name once; report the first example that uses an unknown one.
  std::vector<std::optional<int32_t>> id_of_name;
  for (const std::string& name : views_.label_names) id_of_name.push_back(label_map.Find(name));
  std::vector<int32_t> ids(views_.lines.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t index = views_.label_index[i];
    if (index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_, ":", views_.lines[i], ": missing label (--label_column)"));
    }
    if (!id_of_name[index]) {
      return label_map.UnknownLabelError(file_, views_.lines[i], views_.label_names[index]);
    }
    ids[i] = *id_of_name[index];
  }
  label_ids_ = std::move(ids);
  has_label_ids_ = true;
  return absl::OkStatus();
}

absl::Span<const int32_t> TokenizedDataset::token_label_index(int64_t i) const {
  XLMR_CHECK(has_token_labels()) << file_ << " holds sentence-level data";
  XLMR_CHECK(i >= 0 && i < size()) << "example " << i << " of " << size();
  return views_.token_label_index.subspan(views_.offsets[i], num_tokens(i));
}

absl::Span<const int32_t> TokenizedDataset::word_index(int64_t i) const {
  XLMR_CHECK(has_token_labels()) << file_ << " holds sentence-level data";
  XLMR_CHECK(i >= 0 && i < size()) << "example " << i << " of " << size();
  return views_.word_index.subspan(views_.offsets[i], num_tokens(i));
}

absl::Status TokenizedDataset::AssignTokenLabelIds(const LabelMap& label_map) {
  XLMR_CHECK(has_token_labels()) << file_ << " holds sentence-level data";
  std::vector<std::optional<int32_t>> id_of_name;
  for (const std::string& name : views_.label_names) id_of_name.push_back(label_map.Find(name));
  std::vector<int32_t> ids(views_.token_ids.size(), kIgnored);
  for (int64_t i = 0; i < size(); ++i) {
    for (int64_t t = views_.offsets[i]; t < views_.offsets[i + 1]; ++t) {
      if (views_.word_index[t] < 0) continue;  // not a word's first sub-token
      const int32_t index = views_.token_label_index[t];
      if (index < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            file_, ":", views_.lines[i], ": sentence has no tags (--tags_column)"));
      }
      if (!id_of_name[index]) {
        return label_map.UnknownLabelError(file_, views_.lines[i], views_.label_names[index],
                                           "tag", "--tags_column");
      }
      ids[t] = *id_of_name[index];
    }
  }
  token_label_ids_ = std::move(ids);
  has_token_label_ids_ = true;
  return absl::OkStatus();
}

absl::Span<const int32_t> TokenizedDataset::token_labels(int64_t i) const {
  XLMR_CHECK(has_token_label_ids_) << "token_labels() before AssignTokenLabelIds";
  XLMR_CHECK(i >= 0 && i < size()) << "example " << i << " of " << size();
  return absl::MakeConstSpan(token_label_ids_).subspan(views_.offsets[i], num_tokens(i));
}

int32_t TokenizedDataset::label(int64_t i) const {
  XLMR_CHECK(has_label_ids_) << "label() before AssignLabelIds";
  XLMR_CHECK(i >= 0 && i < size()) << "example " << i << " of " << size();
  return label_ids_[i];
}

absl::Status TokenizedDataset::AssignRegressionTargets() {
  // Parse each distinct label once; report the first example that uses a bad one.
  std::vector<std::optional<float>> value_of_name;
  for (const std::string& name : views_.label_names) {
    double value = 0;
    const bool finite = absl::SimpleAtod(name, &value) && std::isfinite(static_cast<float>(value));
    value_of_name.push_back(finite ? std::optional<float>(static_cast<float>(value)) : std::nullopt);
  }
  std::vector<float> targets(views_.lines.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    const int32_t index = views_.label_index[i];
    if (index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(file_, ":", views_.lines[i], ": missing label (--label_column)"));
    }
    if (!value_of_name[index]) {
      return absl::InvalidArgumentError(absl::StrCat(
          file_, ":", views_.lines[i], ": label '", views_.label_names[index],
          "' is not a finite number (--label_column holds numbers here: regression targets, similarity scores)"));
    }
    targets[i] = *value_of_name[index];
  }
  targets_ = std::move(targets);
  has_targets_ = true;
  return absl::OkStatus();
}

void TokenizedDataset::AssignSpanLabels(std::vector<int32_t> starts, std::vector<int32_t> ends) {
  XLMR_CHECK(static_cast<int64_t>(starts.size()) == size() &&
             static_cast<int64_t>(ends.size()) == size())
      << starts.size() << " starts and " << ends.size() << " ends for " << size() << " examples";
  for (int64_t i = 0; i < size(); ++i) {
    XLMR_CHECK(starts[i] >= 0 && starts[i] < num_tokens(i) && ends[i] >= 0 &&
               ends[i] < num_tokens(i))
        << "example " << i << ": span [" << starts[i] << ", " << ends[i] << "] outside its "
        << num_tokens(i) << " tokens";
  }
  span_starts_ = std::move(starts);
  span_ends_ = std::move(ends);
  has_span_labels_ = true;
}

int32_t TokenizedDataset::span_start(int64_t i) const {
  XLMR_CHECK(has_span_labels_) << "span_start() before AssignSpanLabels";
  XLMR_CHECK(i >= 0 && i < size()) << "example " << i << " of " << size();
  return span_starts_[i];
}

int32_t TokenizedDataset::span_end(int64_t i) const {
  XLMR_CHECK(has_span_labels_) << "span_end() before AssignSpanLabels";
  XLMR_CHECK(i >= 0 && i < size()) << "example " << i << " of " << size();
  return span_ends_[i];
}

float TokenizedDataset::target(int64_t i) const {
  XLMR_CHECK(has_targets_) << "target() before AssignRegressionTargets";
  XLMR_CHECK(i >= 0 && i < size()) << "example " << i << " of " << size();
  return targets_[i];
}

}  // namespace xlmr::data
