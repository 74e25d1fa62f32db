// Floating-point dtype conversion on the GPU: makes the f16 or bf16 working copy of the fp32
// master weights, and widens f16/bf16 results back to fp32. Plain C++ header (the kernel is in cast.cu).
#ifndef XLMR_KERNELS_CUDA_CAST_H_
#define XLMR_KERNELS_CUDA_CAST_H_

#include "framework/tensor/tensor.h"

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

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_CAST_H_
