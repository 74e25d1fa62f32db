// CUDA kernels of the fully connected layer y = x * weight^T + bias (cuBLASLt, see gemm.h).
//
// The same contract as kernels/cpu/linear.h, which is the reference they are tested against
// (tests/gpu/linear_test.cc). Called through ops::Linear / ops::LinearBackward
// (framework/ops/linear.h), which check the shapes and dtypes documented there; these kernels
// assume them, and every tensor is on Device::kCuda.
// Gradient convention: dweight and dbias are ACCUMULATED (+=); dx is RETURNED (new tensor).
//
// Numerics: products accumulate in fp32 (f16 x f16 and bf16 x bf16 on tensor cores; f32 x f32
// in true fp32, no TF32), the bias (of any of the three dtypes) is added in fp32, and each
// output is rounded once. When the two operands of a product differ in dtype (f32 and a half
// dtype), the half one is first widened exactly to f32, as the CPU kernel does; the model casts
// both to the matmul dtype, so this path is rare.
// dbias's column sums of a 16-bit dy come from the weight-gradient product's own epilogue
// (gemm.h's GemmWithRowSumsOfA, fp32) where cuBLASLt offers it, else from a two-pass fp32 sum.
// Results differ from the CPU's only by the order of the fp32 sums.
// All work is queued on CudaContext::Current().compute_stream().
#ifndef XLMR_KERNELS_CUDA_LINEAR_H_
#define XLMR_KERNELS_CUDA_LINEAR_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// [in] x [..., in] f32|f16|bf16, weight [out, in] f32|f16|bf16, bias [out] f32|f16|bf16 or
// undefined.
// Returns y [..., out] of out_dtype (a new kActivations tensor): one fp32 GEMM with the bias
// fused into its epilogue, rounded once to out_dtype.
Tensor LinearForward(const Tensor& x, const Tensor& weight, const Tensor& bias, DType out_dtype);

// [in] dy [..., out], x [..., in], weight [out, in] (f32|f16|bf16 each).
// [in,out] dweight [out, in] f32 += dy^T x (the GEMM accumulates into it with beta = 1, so
//          micro-steps sum straight into the gradient buffer).
// [in,out] dbias [out] f32 (may be null) += column sums of dy, summed in fp32 in a fixed order
//          (deterministic: the same inputs give the same bits on every run).
// Returns dx [..., in] = dy * weight, rounded once to dx_dtype (a new kActivations tensor).
Tensor LinearBackward(const Tensor& dy, const Tensor& x, const Tensor& weight, Tensor* dweight,
                      Tensor* dbias, DType dx_dtype);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_LINEAR_H_
