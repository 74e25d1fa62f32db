// CPU kernels of the fully connected layer y = x * weight^T + bias (OpenBLAS sgemm).
//
// Called through ops::Linear / ops::LinearBackward (framework/ops/linear.h), which check the
// shapes and dtypes documented there; these kernels assume them.
// Gradient convention: dweight and dbias are ACCUMULATED (+=); dx is RETURNED (new tensor).
#ifndef XLMR_KERNELS_CPU_LINEAR_H_
#define XLMR_KERNELS_CPU_LINEAR_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// [in] x [..., in] f32|f16|bf16, weight [out, in] f32|f16|bf16, bias [out] f32|f16|bf16 or
// undefined.
// Returns y [..., out] of out_dtype: fp32 GEMM of the exact fp32 values, bias added in fp32,
// one rounding to out_dtype.
Tensor LinearForward(const Tensor& x, const Tensor& weight, const Tensor& bias, DType out_dtype);

// [in] dy [..., out], x [..., in], weight [out, in] (f32|f16|bf16 each).
// [in,out] dweight [out, in] f32 += dy^T x;  dbias [out] f32 (may be null) += column sums of dy.
// Returns dx [..., in] = dy * weight, rounded once to dx_dtype.
Tensor LinearBackward(const Tensor& dy, const Tensor& x, const Tensor& weight, Tensor* dweight,
                      Tensor* dbias, DType dx_dtype);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_LINEAR_H_
