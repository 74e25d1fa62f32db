// CUDA kernels of the pointwise activations (framework/ops/activations.h): exact (erf) GELU and
// tanh. Plain C++ header; the kernels are in activations.cu.
//
// Same contract as kernels/cpu/activations.h: every function RETURNS a new kActivations CUDA
// tensor of its input's shape and dtype (f32|f16|bf16), computed in fp32 and rounded once. The
// arithmetic is done in the CPU kernel's order with explicitly rounded operations (no fused
// multiply-add), so the results differ from the CPU's only through the libm functions: CUDA's
// erff/expf/tanhf are within 2 ulp, glibc's within 1.
// Asynchronous: queued on CudaContext::Current().compute_stream().
#ifndef XLMR_KERNELS_CUDA_ACTIVATIONS_H_
#define XLMR_KERNELS_CUDA_ACTIVATIONS_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// [in] x f32|f16|bf16, CUDA. Returns y = 0.5 * x * (1 + erf(x / sqrt(2))).
Tensor GeluForward(const Tensor& x);
// [in] dy, x: same shape, f32|f16|bf16, CUDA. Returns dx = dy * (Phi(x) + x * phi(x)) of x's dtype.
Tensor GeluBackward(const Tensor& dy, const Tensor& x);

// [in] x f32|f16|bf16, CUDA. Returns y = tanh(x).
Tensor TanhForward(const Tensor& x);
// [in] dy, y (the forward's output): same shape, f32|f16|bf16, CUDA. Returns dx = dy * (1 - y^2) of
// y's dtype.
Tensor TanhBackward(const Tensor& dy, const Tensor& y);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_ACTIVATIONS_H_
