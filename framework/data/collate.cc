#include "framework/data/collate.h"

#include <algorithm>

#include "framework/core/check.h"

namespace xlmr::data {

namespace {

// Per-token labels: a tensor of `shape` filled with kIgnored (the padding's label, and every
// position past an example's labels), example b's labels copied from starts[b]. loss_terms
// becomes the count of labels that are not kIgnored.
void CollateTokenLabels(const TokenizedDataset& dataset, const std::vector<int64_t>& indices,
                        const std::vector<int64_t>& starts, std::vector<int64_t> shape, Batch& batch) {
  batch.labels = Tensor::Zeros(std::move(shape), DType::kI32);
  int32_t* labels = batch.labels.data<int32_t>();
  std::fill(labels, labels + batch.labels.numel(), TokenizedDataset::kIgnored);
  batch.loss_terms = 0;
  for (size_t b = 0; b < indices.size(); ++b) {
    const absl::Span<const int32_t> example = dataset.token_labels(indices[b]);
    const int64_t room = (b + 1 < starts.size() ? starts[b + 1] : batch.labels.numel()) - starts[b];
    XLMR_CHECK(static_cast<int64_t>(example.size()) <= room)
        << "example " << indices[b] << ": more labels than tokens";
    std::copy(example.begin(), example.end(), labels + starts[b]);
    batch.loss_terms += std::count_if(example.begin(), example.end(),
                                      [](int32_t label) { return label != TokenizedDataset::kIgnored; });
  }
}

// One label per example: a regression target [B] f32 or a class id [B] i32 (both forms).
void CollateExampleLabels(const TokenizedDataset& dataset, const std::vector<int64_t>& indices,
                          Batch& batch) {
  const auto batch_size = static_cast<int64_t>(indices.size());
  if (dataset.has_targets()) {
    batch.labels = Tensor::Zeros({batch_size}, DType::kF32);
    float* targets = batch.labels.data<float>();
    for (int64_t b = 0; b < batch_size; ++b) targets[b] = dataset.target(indices[b]);
  } else if (dataset.has_label_ids()) {
    batch.labels = Tensor::Zeros({batch_size}, DType::kI32);
    int32_t* labels = batch.labels.data<int32_t>();
    for (int64_t b = 0; b < batch_size; ++b) labels[b] = dataset.label(indices[b]);
  }
}

// Writes example's segment ids at `out`: 0 up to and including the first separator, 1 after.
void WriteSegmentIds(absl::Span<const int32_t> example, int32_t separator_id, int32_t* out) {
  int32_t segment = 0;
  for (size_t t = 0; t < example.size(); ++t) {
    out[t] = segment;
    if (example[t] == separator_id) segment = 1;
  }
}

}  // namespace

Batch Collate(const TokenizedDataset& dataset, const std::vector<int64_t>& indices,
              int32_t pad_id, int32_t segment_separator_id) {
  const auto batch_size = static_cast<int64_t>(indices.size());
  int64_t longest = 0;
  for (int64_t index : indices) {
    XLMR_CHECK(index >= 0 && index < dataset.size())
        << "example " << index << " of " << dataset.size();
    longest = std::max(longest, dataset.num_tokens(index));
  }
  Batch batch;
  batch.input_ids = Tensor::Zeros({batch_size, longest}, DType::kI32);
  batch.attention_mask = Tensor::Zeros({batch_size, longest}, DType::kI32);
  int32_t* ids = batch.input_ids.data<int32_t>();
  int32_t* mask = batch.attention_mask.data<int32_t>();
  std::fill(ids, ids + batch_size * longest, pad_id);  // the mask is already all 0
  const bool segments = segment_separator_id >= 0;
  if (segments) batch.token_type_ids = Tensor::Zeros({batch_size, longest}, DType::kI32);
  for (int64_t b = 0; b < batch_size; ++b) {
    const absl::Span<const int32_t> example = dataset.example(indices[b]);
    std::copy(example.begin(), example.end(), ids + b * longest);
    std::fill(mask + b * longest, mask + b * longest + example.size(), 1);
    if (segments) {
      WriteSegmentIds(example, segment_separator_id, batch.token_type_ids.data<int32_t>() + b * longest);
    }
    batch.tokens += static_cast<int64_t>(example.size());
  }
  batch.loss_terms = batch_size;
  if (dataset.has_token_label_ids()) {
    std::vector<int64_t> starts(batch_size);
    for (int64_t b = 0; b < batch_size; ++b) starts[b] = b * longest;
    CollateTokenLabels(dataset, indices, starts, {batch_size, longest}, batch);
  } else if (dataset.has_span_labels()) {
    batch.labels = Tensor::Zeros({2, batch_size}, DType::kI32);
    int32_t* labels = batch.labels.data<int32_t>();
    for (int64_t b = 0; b < batch_size; ++b) {
      labels[b] = dataset.span_start(indices[b]);
      labels[batch_size + b] = dataset.span_end(indices[b]);
    }
    batch.loss_terms = 2 * batch_size;
  } else {
    CollateExampleLabels(dataset, indices, batch);
  }
  return batch;
}

Batch CollatePacked(const TokenizedDataset& dataset, const std::vector<int64_t>& indices,
                    int32_t segment_separator_id) {
  const auto batch_size = static_cast<int64_t>(indices.size());
  Batch batch;
  batch.cu_seqlens = Tensor::Zeros({batch_size + 1}, DType::kI32);
  int32_t* cu = batch.cu_seqlens.data<int32_t>();
  for (int64_t b = 0; b < batch_size; ++b) {
    XLMR_CHECK(indices[b] >= 0 && indices[b] < dataset.size())
        << "example " << indices[b] << " of " << dataset.size();
    const int64_t length = dataset.num_tokens(indices[b]);
    batch.max_seqlen = std::max(batch.max_seqlen, length);
    cu[b + 1] = static_cast<int32_t>(cu[b] + length);
  }
  batch.tokens = cu[batch_size];
  batch.input_ids = Tensor::Zeros({batch.tokens}, DType::kI32);
  int32_t* ids = batch.input_ids.data<int32_t>();
  const bool segments = segment_separator_id >= 0;
  if (segments) batch.token_type_ids = Tensor::Zeros({batch.tokens}, DType::kI32);
  for (int64_t b = 0; b < batch_size; ++b) {
    const absl::Span<const int32_t> example = dataset.example(indices[b]);
    std::copy(example.begin(), example.end(), ids + cu[b]);
    if (segments) WriteSegmentIds(example, segment_separator_id, batch.token_type_ids.data<int32_t>() + cu[b]);
  }
  batch.loss_terms = batch_size;
  if (dataset.has_token_label_ids()) {
    CollateTokenLabels(dataset, indices, std::vector<int64_t>(cu, cu + batch_size), {batch.tokens}, batch);
  } else {
    CollateExampleLabels(dataset, indices, batch);
  }
  return batch;
}

}  // namespace xlmr::data
