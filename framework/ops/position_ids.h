// RoBERTa's position ids (HF create_position_ids_from_input_ids): along each sequence, the k-th
// non-padding token gets pad_id + k (k from 1) and every padding token gets pad_id, i.e.
// cumsum(ids != pad) * (ids != pad) + pad. Computed where the ids are, so a GPU step never
// copies them to the host and back. Integer arithmetic: bit-exact on every backend.
#ifndef XLMR_FRAMEWORK_OPS_POSITION_IDS_H_
#define XLMR_FRAMEWORK_OPS_POSITION_IDS_H_

#include <cstdint>

#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// [in] input_ids [B,S] i32. Returns [B,S] i32 on input_ids' device (kActivations).
Tensor RobertaPositionIds(const Tensor& input_ids, int32_t pad_id);

// The same numbering for a packed batch (no padding): it restarts with every sequence, so the
// k-th token of each sequence gets pad_id + k (k from 1), what the sequence gets padded.
// [in] cu_seqlens [B + 1] i32 on the host (framework/ops/varlen_fused_attention.h's
// convention, already validated). Returns [T] i32 on `device` (kActivations), T =
// cu_seqlens[B]; built on the host, where cu_seqlens is, and copied once.
Tensor RobertaPackedPositionIds(const Tensor& cu_seqlens, int32_t pad_id, Device device);

// BERT's absolute positions (HF BertEmbeddings' position_ids buffer): 0, 1, ..., S - 1 along
// every row, padding included. [in] input_ids [B,S] i32 (only its shape and device are read).
// Returns [B,S] i32 on input_ids' device (kActivations); built on the host and copied once.
// For a packed batch the same numbering is RobertaPackedPositionIds with pad_id -1.
Tensor AbsolutePositionIds(const Tensor& input_ids);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_POSITION_IDS_H_
