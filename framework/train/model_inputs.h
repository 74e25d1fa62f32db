// What a model's Forward reads of a batch (ModelInputs), and the one copy of a data batch into
// it (ToModelInputs) that training, evaluation, prediction and the memory probe all use, so
// that every pass sees the same tensors on the same device in the same form.
#ifndef XLMR_FRAMEWORK_TRAIN_MODEL_INPUTS_H_
#define XLMR_FRAMEWORK_TRAIN_MODEL_INPUTS_H_

#include <cstdint>

#include "framework/core/device.h"
#include "framework/data/collate.h"
#include "framework/tensor/tensor.h"

namespace xlmr::train {

// A batch on the model's device, padded or packed (data::Batch's two forms).
struct ModelInputs {
  Tensor input_ids;       // padded: [B,S] i32, padded with the model's pad id; packed: [T] i32
  Tensor attention_mask;  // padded: [B,S] i32, 1 real token, 0 padding; packed: undefined
  // Shaped as input_ids, on its device: the segment of each token (0 the first text, 1 the
  // second; BERT's token_type_ids), or undefined: all 0.
  Tensor token_type_ids;
  // Packed only: [B + 1] i32 on the HOST (sequence b is tokens [cu_seqlens[b],
  // cu_seqlens[b + 1])) and the longest sequence; undefined / 0 for a padded batch.
  Tensor cu_seqlens;
  int64_t max_seqlen = 0;
  bool packed() const { return cu_seqlens.defined(); }
};

// `batch`'s inputs for a model on `device`, in the batch's form: input_ids copied to `device`;
// padded: attention_mask copied; packed: cu_seqlens shared, not copied (it stays on the host,
// where the attention reads the sequence bounds) and max_seqlen; token_type_ids copied when the
// batch has them. The copies are new tensors (MemoryCategory::kActivations), made in that order.
// The labels are not inputs: a caller that needs them copies them itself.
ModelInputs ToModelInputs(const data::Batch& batch, Device device);

}  // namespace xlmr::train

#endif  // XLMR_FRAMEWORK_TRAIN_MODEL_INPUTS_H_
