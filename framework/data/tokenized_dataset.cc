#include "framework/data/tokenized_dataset.h"

#include <utility>

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
}

TokenizedDataset TokenizedDataset::FromColumns(std::string file, TokenizedColumns columns) {
  auto owned = std::make_shared<TokenizedColumns>(std::move(columns));
  Views views;
  views.offsets = owned->offsets;
  views.token_ids = owned->token_ids;
  views.lines = owned->lines;
  views.label_index = owned->label_index;
  views.label_names = owned->label_names;
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

int32_t TokenizedDataset::label(int64_t i) const {
  XLMR_CHECK(has_label_ids_) << "label() before AssignLabelIds";
  XLMR_CHECK(i >= 0 && i < size()) << "example " << i << " of " << size();
  return label_ids_[i];
}

}  // namespace xlmr::data
