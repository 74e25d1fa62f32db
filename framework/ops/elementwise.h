// Elementwise arithmetic: the residual addition and dtype casts.
//
// Gradient convention: no parameters. Add's backward is the identity on both inputs (the
// caller passes dy on; a residual gradient that meets another is summed with Add), and a
// cast's backward is a cast back, so neither has a separate Backward function.
#ifndef XLMR_FRAMEWORK_OPS_ELEMENTWISE_H_
#define XLMR_FRAMEWORK_OPS_ELEMENTWISE_H_

#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// [in] a, b: same shape, f32|f16|bf16 (dtypes may differ). Returns a + b computed in fp32 and
// rounded once to out_dtype (f32|f16|bf16), as a new kActivations tensor.
Tensor Add(const Tensor& a, const Tensor& b, DType out_dtype);

// [in] x f32|f16|bf16. Returns x rounded once to dtype (f32|f16|bf16) as a new kActivations
// tensor, or x itself (shared, no copy) when it already has that dtype.
Tensor Cast(const Tensor& x, DType dtype);

// [in] x f32|f16|bf16. [out] out: a tensor of x's shape and dtype f32|f16|bf16 on x's device
// (e.g. the f16 or bf16 working copy of the weights, a view into its flat buffer); each element
// is overwritten with x rounded once to out's dtype.
void CastInto(const Tensor& x, Tensor* out);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_ELEMENTWISE_H_
