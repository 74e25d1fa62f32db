// The Philox element index of attention dropout's mask, shared by every attention kernel (eager
// and fused, padded and packed, CPU and CUDA) so that they draw the same mask bit for bit.
//
// Mask element (example b of the micro-batch, head h, query position i, key position j), with
// pair = b * heads + h and a fixed `stride` (positions i, j < stride):
//
//   index = (pair * stride + i) * stride + j
//
// kept iff DropoutUniform(key, index) >= p (framework/random/philox.h). The index depends on the
// example's place, the head and the two positions only, never on how the micro-batch is laid
// out in memory: a padded batch [B, S, H] with S <= stride and the same batch packed into T
// tokens (kernels' varlen form) see the same mask when given the same stride. With stride = S
// it is the flat index into [B, heads, S, S], the index before packed batches existed
// (ops::Attention's and ops::FusedAttention's default). Why a stride and not the padded length:
// docs/DECISIONS.md, "Attention dropout's mask index".
//
// constexpr so that the CUDA kernels call it too (nvcc --expt-relaxed-constexpr).
#ifndef XLMR_KERNELS_COMMON_ATTENTION_DROPOUT_INDEX_H_
#define XLMR_KERNELS_COMMON_ATTENTION_DROPOUT_INDEX_H_

#include <cstdint>

namespace xlmr::kernels {

// The index of mask element (pair, i, j); see above.
constexpr int64_t AttentionDropoutIndex(int64_t pair, int64_t stride, int64_t i, int64_t j) {
  return (pair * stride + i) * stride + j;
}

// How many indices a batch of `batch` examples with `heads` heads may address: the bound the
// kernels check against kMaxDropoutElements before drawing.
constexpr int64_t AttentionDropoutElements(int64_t batch, int64_t heads, int64_t stride) {
  return batch * heads * stride * stride;
}

}  // namespace xlmr::kernels

#endif  // XLMR_KERNELS_COMMON_ATTENTION_DROPOUT_INDEX_H_
