#include "framework/data/batch_slice.h"

#include <algorithm>

#include "framework/core/check.h"

namespace xlmr::data {
namespace {

// Rows [begin, end) of a [B, S] i32 tensor, the first `length` columns of each.
Tensor CutRows(const Tensor& t, int64_t begin, int64_t end, int64_t length) {
  Tensor out = Tensor::Zeros({end - begin, length}, DType::kI32, Device::kCpu, MemoryCategory::kActivations);
  for (int64_t b = begin; b < end; ++b) {
    std::copy_n(t.data<int32_t>() + b * t.dim(1), length, out.data<int32_t>() + (b - begin) * length);
  }
  return out;
}

Batch SlicePadded(const Batch& batch, int64_t begin, int64_t end) {
  const int32_t* mask = batch.attention_mask.data<int32_t>();
  const int64_t seq = batch.attention_mask.dim(1);
  int64_t longest = 0;
  Batch slice;
  for (int64_t b = begin; b < end; ++b) {
    const int64_t length = std::count(mask + b * seq, mask + (b + 1) * seq, 1);
    XLMR_CHECK(std::all_of(mask + b * seq, mask + b * seq + length, [](int32_t m) { return m == 1; }))
        << "sequence " << b << " is not right-padded";
    longest = std::max(longest, length);
    slice.tokens += length;
  }
  slice.input_ids = CutRows(batch.input_ids, begin, end, longest);
  slice.attention_mask = CutRows(batch.attention_mask, begin, end, longest);
  if (batch.token_type_ids.defined()) slice.token_type_ids = CutRows(batch.token_type_ids, begin, end, longest);
  return slice;
}

Batch SlicePacked(const Batch& batch, int64_t begin, int64_t end) {
  const int32_t* cu = batch.cu_seqlens.data<int32_t>();
  Batch slice;
  slice.input_ids = batch.input_ids.Slice(cu[begin], cu[end]);
  if (batch.token_type_ids.defined()) slice.token_type_ids = batch.token_type_ids.Slice(cu[begin], cu[end]);
  slice.cu_seqlens = Tensor::Zeros({end - begin + 1}, DType::kI32);
  for (int64_t b = begin; b <= end; ++b) {
    slice.cu_seqlens.data<int32_t>()[b - begin] = cu[b] - cu[begin];
    if (b < end) slice.max_seqlen = std::max<int64_t>(slice.max_seqlen, cu[b + 1] - cu[b]);
  }
  slice.tokens = cu[end] - cu[begin];
  return slice;
}

}  // namespace

Batch SliceSequences(const Batch& batch, int64_t begin, int64_t end) {
  XLMR_CHECK(0 <= begin && begin < end && end <= batch.examples())
      << "sequences [" << begin << ", " << end << ") of a batch of " << batch.examples();
  return batch.packed() ? SlicePacked(batch, begin, end) : SlicePadded(batch, begin, end);
}

}  // namespace xlmr::data
