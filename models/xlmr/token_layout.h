// Where a pass's tokens sit: the rows the per-token ops run on, and each row's place in the
// micro-batch (example b, position s), which keys its dropout masks.
//
// Dropout masks do not depend on padding (docs/DECISIONS.md, "Dropout masks do not depend on
// padding"): every per-token dropout site draws row (b, s)'s mask from slot b * stride + s
// (ops::DropoutRows), and attention dropout uses the same stride for its query and key
// positions (ops::Attention's dropout_stride). The stride is the longest sequence the model
// takes, XlmrConfig::max_sequence_length() (512 for XLM-R): fixed by the model, so a run's
// masks do not move with --max_seq_length, the batch's padded length or --group_by_length.
#ifndef XLMR_MODELS_XLMR_TOKEN_LAYOUT_H_
#define XLMR_MODELS_XLMR_TOKEN_LAYOUT_H_

#include <cstdint>

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::models {

struct TokenLayout {
  Tensor key_mask;     // [B,S] i32 on the model's device: 1 real token, 0 padding
  Tensor slots;        // [B*S] i32 on the model's device: row b*S+s -> b * stride + s
  int64_t batch = 0;   // B
  int64_t stride = 0;  // the fixed slot stride, >= S

  int64_t num_slots() const { return batch * stride; }
  bool defined() const { return key_mask.defined(); }
};

// The layout of a padded batch. [in] attention_mask [B,S] i32 (on the model's device);
// stride >= S (checked). The slots are built on the host and copied to the mask's device.
TokenLayout PaddedTokenLayout(const Tensor& attention_mask, int64_t stride);

// ops::DropoutRows / DropoutRowsBackward of x (rows as `layout`'s, any width) at `layout`'s
// slots.
Tensor TokenDropout(const Tensor& x, float p, const DropoutKey& key, const TokenLayout& layout);
Tensor TokenDropoutBackward(const Tensor& dy, float p, const DropoutKey& key,
                            const TokenLayout& layout);

}  // namespace xlmr::models

#endif  // XLMR_MODELS_XLMR_TOKEN_LAYOUT_H_
