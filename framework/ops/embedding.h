// Embedding lookup (nn.Embedding): out[i] = table[ids[i]].
//
// Gradient convention: the table gradient is ACCUMULATED (+=) into the fp32 tensor the caller
// passes; ids have no gradient. Ids outside [0, V) are an XLMR_CHECK failure: the data layer
// validates token ids against the vocabulary before they reach the model.
#ifndef XLMR_FRAMEWORK_OPS_EMBEDDING_H_
#define XLMR_FRAMEWORK_OPS_EMBEDDING_H_

#include <cstdint>

#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// [in] table [V, H] f32 (the master weights); ids [...] i32, each in [0, V).
// Returns [..., H] of out_dtype (f32|f16|bf16): the table rows, each value rounded once.
Tensor Embedding(const Tensor& table, const Tensor& ids, DType out_dtype);

// Backward needs only the ids. [in] dy [..., H] f32|f16|bf16 (ids' shape plus H).
// padding_idx: rows equal to it get no gradient (nn.Embedding's padding_idx); negative = none.
// [in,out] dtable [V, H] f32: dtable[ids[i]] += dy[i] for every i whose id != padding_idx.
void EmbeddingBackward(const Tensor& dy, const Tensor& ids, int64_t padding_idx, Tensor* dtable);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_EMBEDDING_H_
