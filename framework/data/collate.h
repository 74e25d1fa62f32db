// Turning a list of examples into model inputs: padded, or packed without padding.
#ifndef XLMR_FRAMEWORK_DATA_COLLATE_H_
#define XLMR_FRAMEWORK_DATA_COLLATE_H_

#include <cstdint>
#include <vector>

#include "framework/data/tokenized_dataset.h"
#include "framework/tensor/tensor.h"

namespace xlmr::data {

// One micro-batch on the host (MemoryCategory::kActivations: the embedding backward keeps
// input_ids). B = number of examples, S = the longest example's length (dynamic padding, as
// Hugging Face's DataCollatorWithPadding: no padding to max_length).
struct Batch {
  Tensor input_ids;       // [B, S] i32; example b's ids, then pad_id (right padding)
  Tensor attention_mask;  // [B, S] i32; 1 over the example's ids, 0 over padding
  // Shaped as input_ids, or undefined when the collate was given no segment separator: each
  // token's segment (BERT's token_type_ids), 0 up to and including the example's first
  // separator, 1 after it; 0 over padding (HF's pad_token_type_id).
  Tensor token_type_ids;
  // What the dataset assigned (undefined when nothing was):
  //   label ids (AssignLabelIds)              [B] i32;
  //   regression targets (AssignRegressionTargets)  [B] f32;
  //   per-token label ids (AssignTokenLabelIds)     [B, S] i32, -100 where no label counts
  //                                                 (later sub-tokens, specials, padding);
  //   answer spans (AssignSpanLabels)               [2, B] i32: row 0 the start positions,
  //                                                 row 1 the end positions (the layout of
  //                                                 train::Objective::kSpanStartEnd).
  Tensor labels;
  int64_t tokens = 0;       // non-padding tokens, i.e. the sum of attention_mask
  int64_t loss_terms = 0;   // terms the loss sums: B, the labels other than -100 per token, or
                            // 2B for answer spans (a start and an end each)

  // Packed (CollatePacked, --padding_free): the same examples in the same order, no padding.
  // input_ids is [T] i32, the examples' ids back to back (T = tokens); attention_mask is
  // undefined; per-token labels are [T] i32 (sequence labels and targets stay [B]).
  // cu_seqlens [B + 1] i32 (host): example b is tokens [cu_seqlens[b], cu_seqlens[b + 1]);
  // max_seqlen its longest example (0 for B = 0). Undefined / 0 for a padded batch.
  Tensor cu_seqlens;
  int64_t max_seqlen = 0;
  bool packed() const { return cu_seqlens.defined(); }
  // B, in either form.
  int64_t examples() const { return packed() ? cu_seqlens.numel() - 1 : input_ids.dim(0); }
};

// [in] indices: examples of `dataset`, in batch order (repeats allowed); may be empty, which
//      gives B = 0, S = 0 (shapes [0, 0] and [0]) and tokens = 0.
// [in] pad_id: the tokenizer's padding id (1 for XLM-R).
// [in] segment_separator_id: the id that ends an example's first text ([SEP] for BERT), which
//      makes the batch carry token_type_ids; -1 (families whose token types are all 0): none.
//      Exact for what the tokenizers encode: their texts never spell a special id.
Batch Collate(const TokenizedDataset& dataset, const std::vector<int64_t>& indices, int32_t pad_id,
              int32_t segment_separator_id = -1);

// The packed form of Collate(dataset, indices, pad_id, segment_separator_id): same examples,
// order, labels, tokens, token types and loss_terms; no padding. Empty `indices` gives T = 0
// and cu_seqlens = {0}.
Batch CollatePacked(const TokenizedDataset& dataset, const std::vector<int64_t>& indices,
                    int32_t segment_separator_id = -1);

}  // namespace xlmr::data

#endif  // XLMR_FRAMEWORK_DATA_COLLATE_H_
