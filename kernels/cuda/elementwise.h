// CUDA kernels of the elementwise arithmetic ops (framework/ops/elementwise.h): residual addition
// and dtype casts. Plain C++ header; the kernels are in elementwise.cu. Same contract as
// kernels/cpu/elementwise.h: read exactly into fp32, compute in fp32, round once on write.
// Asynchronous: queued on CudaContext::Current().compute_stream().
#ifndef XLMR_KERNELS_CUDA_ELEMENTWISE_H_
#define XLMR_KERNELS_CUDA_ELEMENTWISE_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// [in] a, b: same shape, f32|f16|bf16 each (the dtypes may differ), Device::kCuda.
// Returns a + b, one fp32 addition per element rounded once to out_dtype (f32|f16|bf16), as a
// new kActivations CUDA tensor: bit for bit what kernels::cpu::AddForward computes.
Tensor AddForward(const Tensor& a, const Tensor& b, DType out_dtype);

// [in] x f32|f16|bf16. [out] out: a CUDA tensor of x's shape, f32|f16|bf16, not overlapping x
// (e.g. a view into the f16 or bf16 weight buffer); every element is overwritten with x rounded
// once to out's dtype (CastTensor of cast.h), bit for bit kernels::cpu::CastInto.
void CastInto(const Tensor& x, Tensor* out);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_ELEMENTWISE_H_
