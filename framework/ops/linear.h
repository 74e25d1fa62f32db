// Fully connected layer: y = x * weight^T + bias (nn.Linear / F.linear).
//
// Gradient convention: parameter gradients (dweight, dbias) are ACCUMULATED (+=) into the fp32
// tensors the caller passes (views into the flat gradient buffer); the input gradient dx is
// RETURNED as a new kActivations tensor on x's device.
//
// Numerics: f16 and bf16 operands are converted exactly to fp32, multiplied with fp32
// accumulation (as tensor cores do f16 x f16 -> fp32, bf16 likewise), the bias is added in fp32,
// and the result is rounded once to the requested dtype.
#ifndef XLMR_FRAMEWORK_OPS_LINEAR_H_
#define XLMR_FRAMEWORK_OPS_LINEAR_H_

#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// [in] x      [..., in] f32|f16|bf16, rank >= 2 (all but the last dimension are rows).
// [in] weight [out, in] f32|f16|bf16, in >= 1 (the fp32 master, or its f16 or bf16 working
//             copy under autocast).
// [in] bias   [out] f32, or f16|bf16 (autocast's rounded bias, added exactly as its f32 value;
//              cuBLASLt fuses it into a half output's epilogue), or undefined for no bias.
// Returns y [..., out] of out_dtype (f32|f16|bf16).
Tensor Linear(const Tensor& x, const Tensor& weight, const Tensor& bias, DType out_dtype);

// Backward needs the forward's inputs x and weight (not y).
// [in] dy [..., out] f32|f16|bf16, the gradient of y; x and weight as given to Linear.
// [in,out] dweight [out, in] f32: += dy^T x.
// [in,out] dbias [out] f32: += sum of dy over rows; null when the forward had no bias.
// Returns dx [..., in] of dx_dtype (f32|f16|bf16).
Tensor LinearBackward(const Tensor& dy, const Tensor& x, const Tensor& weight, Tensor* dweight,
                      Tensor* dbias, DType dx_dtype);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_LINEAR_H_
