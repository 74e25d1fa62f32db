// Where a pass's tokens sit: the rows the per-token ops run on, and each row's place in the
// micro-batch (example b, position s), which keys its dropout masks.
//
// Dropout masks do not depend on padding (docs/DECISIONS.md, "Dropout masks do not depend on
// padding"): every per-token dropout site draws row (b, s)'s mask from slot b * stride + s
// (ops::DropoutRows), and attention dropout uses the same stride for its query and key
// positions (ops::Attention's dropout_stride). The stride is the longest sequence the model
// takes, EncoderConfig::max_sequence_length() (512 for XLM-R): fixed by the model, so a run's
// masks do not move with --max_seq_length, the batch's padded length or --group_by_length.
#ifndef XLMR_MODELS_ENCODER_TOKEN_LAYOUT_H_
#define XLMR_MODELS_ENCODER_TOKEN_LAYOUT_H_

#include <cstdint>

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::models {

// Padded: rows are [B,S] (row b*S+s is example b's position s, padding included). Packed
// (--padding_free): rows are the T real tokens, sequence b at rows [cu_seqlens[b],
// cu_seqlens[b+1]).
struct TokenLayout {
  Tensor key_mask;     // padded: [B,S] i32 on the model's device, 1 real token, 0 padding
  Tensor cu_seqlens;   // packed: [B + 1] i32 on the host
  Tensor cu_seqlens_on_device;  // packed on a GPU: the same, uploaded once for every layer's attention
  int64_t max_seqlen = 0;  // packed: the longest sequence
  Tensor first_rows;   // packed: [B] i32 on the model's device, cu_seqlens[b] (each <s>)
  Tensor slots;        // [rows] i32 on the model's device: example b's position s -> b * stride + s
  int64_t batch = 0;   // B
  int64_t stride = 0;  // the fixed slot stride, >= the longest sequence

  int64_t num_slots() const { return batch * stride; }
  bool packed() const { return cu_seqlens.defined(); }
};

// The layout of a padded batch. [in] attention_mask [B,S] i32 (on the model's device);
// stride >= S (checked). The slots are built on the host and copied to the mask's device.
TokenLayout PaddedTokenLayout(const Tensor& attention_mask, int64_t stride);

// The layout of a packed batch. [in] cu_seqlens [B + 1] i32 on the host and max_seqlen, as
// ops::ValidateCuSeqlens accepts for `tokens` rows (checked); stride >= max_seqlen (checked).
// Slots and first rows are built on the host and copied to `device`.
TokenLayout PackedTokenLayout(const Tensor& cu_seqlens, int64_t max_seqlen, int64_t tokens,
                              int64_t stride, Device device);

// ops::DropoutRows / DropoutRowsBackward of x (rows as `layout`'s, any width) at `layout`'s
// slots.
Tensor TokenDropout(const Tensor& x, float p, const DropoutKey& key, const TokenLayout& layout);
Tensor TokenDropoutBackward(const Tensor& dy, float p, const DropoutKey& key,
                            const TokenLayout& layout);

}  // namespace xlmr::models

#endif  // XLMR_MODELS_ENCODER_TOKEN_LAYOUT_H_
