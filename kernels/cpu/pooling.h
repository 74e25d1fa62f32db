// CPU kernels of sentence-transformers' mean pooling (framework/ops/pooling.h): each sequence's
// token vectors summed in token order in fp32 and divided by its token count. The CUDA kernels
// add in the same order with the same roundings, so both backends give the same bits.
// Gradient convention: dx is RETURNED (new f32 tensor, `=`), kActivations.
#ifndef XLMR_KERNELS_CPU_POOLING_H_
#define XLMR_KERNELS_CPU_POOLING_H_

#include <cstdint>

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// [in] x [B,S,H] f32; mask [B,S] i32 (non-zero: a real token). Returns [B,H] f32.
Tensor MaskedMeanPool(const Tensor& x, const Tensor& mask);
// [in] dy [B,H] f32; mask [B,S] i32. Returns dx [B,S,H] f32.
Tensor MaskedMeanPoolBackward(const Tensor& dy, const Tensor& mask);

// [in] x [T,H] f32; cu_seqlens [B + 1] i32 (sequence b is rows [cu_seqlens[b], cu_seqlens[b+1])).
// Returns [B,H] f32.
Tensor SegmentMeanPool(const Tensor& x, const Tensor& cu_seqlens);
// [in] dy [B,H] f32; cu_seqlens as above; rows = T. Returns dx [T,H] f32.
Tensor SegmentMeanPoolBackward(const Tensor& dy, const Tensor& cu_seqlens, int64_t rows);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_POOLING_H_
