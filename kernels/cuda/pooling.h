// CUDA kernels of sentence-transformers' mean pooling (framework/ops/pooling.h). Plain C++
// header; the kernels are in pooling.cu. Same contract and the same bits as
// kernels/cpu/pooling.h: one thread per (sequence, feature) adds the sequence's tokens in order
// in fp32 and divides once by the count. Asynchronous, on the compute stream.
#ifndef XLMR_KERNELS_CUDA_POOLING_H_
#define XLMR_KERNELS_CUDA_POOLING_H_

#include <cstdint>

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// [in] x [B,S,H] f32; mask [B,S] i32; both CUDA. Returns [B,H] f32.
Tensor MaskedMeanPool(const Tensor& x, const Tensor& mask);
// [in] dy [B,H] f32; mask [B,S] i32; both CUDA. Returns dx [B,S,H] f32.
Tensor MaskedMeanPoolBackward(const Tensor& dy, const Tensor& mask);

// [in] x [T,H] f32; cu_seqlens [B + 1] i32; both CUDA. Returns [B,H] f32.
Tensor SegmentMeanPool(const Tensor& x, const Tensor& cu_seqlens);
// [in] dy [B,H] f32; cu_seqlens [B + 1] i32 CUDA; rows = T. Returns dx [T,H] f32.
Tensor SegmentMeanPoolBackward(const Tensor& dy, const Tensor& cu_seqlens, int64_t rows);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_POOLING_H_
