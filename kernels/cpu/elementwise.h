// CPU kernels of the elementwise arithmetic ops: residual addition and dtype casts.
//
// Called through framework/ops/elementwise.h, which checks shapes and dtypes.
#ifndef XLMR_KERNELS_CPU_ELEMENTWISE_H_
#define XLMR_KERNELS_CPU_ELEMENTWISE_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// Returns a + b (same shape, floating dtypes) computed in fp32, rounded once to out_dtype.
Tensor AddForward(const Tensor& a, const Tensor& b, DType out_dtype);

// [in] x floating. [out] out: a tensor of x's shape; every element is set to x rounded once to
// out's dtype.
void CastInto(const Tensor& x, Tensor* out);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_ELEMENTWISE_H_
