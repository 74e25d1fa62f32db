// CPU kernels of the embedding lookup (nn.Embedding / F.embedding).
//
// Called through framework/ops/embedding.h, which checks shapes and dtypes; the kernels check
// the ids themselves (they are the ones reading them). Gradient convention: dtable is
// ACCUMULATED (+=).
#ifndef XLMR_KERNELS_CPU_EMBEDDING_H_
#define XLMR_KERNELS_CPU_EMBEDDING_H_

#include <cstdint>

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// [in] table [V, H] f32; ids [...] i32, each in [0, V) (XLMR_CHECK).
// Returns out [..., H] of out_dtype: row ids[i] of the table, rounded once.
Tensor EmbeddingForward(const Tensor& table, const Tensor& ids, DType out_dtype);

// [in] dy [..., H] f32|f16|bf16; ids as in the forward; padding_idx < 0 means none.
// [in,out] dtable [V, H] f32: row ids[i] += dy row i, except rows equal to padding_idx.
void EmbeddingBackward(const Tensor& dy, const Tensor& ids, int64_t padding_idx, Tensor* dtable);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_EMBEDDING_H_
