// Floating-point dtype conversion on the GPU: makes the f16 or bf16 working copy of the fp32
// master weights, widens f16/bf16 results back to fp32, and copies strided batches of matrices
// between layouts (the GEMM's staging, gemm.cc). Plain C++ header (the kernels are in cast.cu).
#ifndef XLMR_KERNELS_CUDA_CAST_H_
#define XLMR_KERNELS_CUDA_CAST_H_

#include <cstdint>

#include "framework/tensor/tensor.h"
#include "kernels/cuda/matrix_layout.h"

namespace xlmr::kernels::cuda {

// dst = src converted element by element to dst's dtype (the "=" convention: dst is
// overwritten, not accumulated into).
//   [in]  src: any shape; F32, F16 or BF16; Device::kCuda.
//   [out] dst: the same shape as src, allocated by the caller; F32, F16 or BF16;
//         Device::kCuda; its bytes must not overlap src's (views of one buffer are fine when
//         disjoint).
// Every conversion widens exactly to fp32 and rounds once to the target type, to nearest with
// ties to even (__float2half_rn / __float2bfloat16_rn): overflow gives +-inf, subnormals are
// kept, NaN stays NaN. The result is therefore bit for bit what framework/tensor/half.h computes
// on the CPU (NaN payloads aside: the GPU returns its canonical NaN). Same dtype is a copy.
// Asynchronous: queued on CudaContext::Current().compute_stream().
void CastTensor(const Tensor& src, Tensor* dst);

// For i in [0, batch_count): matrix i of dst = matrix i of src, converted element by element
// to dst's dtype with CastTensor's rounding (same dtype: a copy).
//   [in]  src: F32, F16 or BF16 on Device::kCuda, holding every matrix as `src_layout` says.
//   [out] dst: F32, F16 or BF16 on Device::kCuda, allocated by the caller; the elements of
//         `dst_layout`'s matrices are written, every other element (padding between rows or
//         matrices) is left as it was. dst's matrices must not overlap each other (unless
//         batch_count is 1) nor src's bytes.
// Both layouts have the same rows and cols; any ld >= cols and batch stride >= 0 (src's may be
// 0: one matrix for every i). Every addressed element must lie inside its tensor.
// Asynchronous: queued on CudaContext::Current().compute_stream().
void CastMatrices(int64_t batch_count, const Tensor& src, const MatrixLayout& src_layout,
                  Tensor* dst, const MatrixLayout& dst_layout);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_CAST_H_
