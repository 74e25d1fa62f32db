// CPU kernels of row dot products (framework/ops/row_dot.h): dots[i] = a[i,:] . b[i,:]. Each
// row's sum is a float sum in column order of rounded products with no fused multiply-add
// (kernels/common/row_dot.h), which the CUDA kernels repeat, so both backends give the same bits.
// Gradient convention: da and db are written into the caller's tensors (`=`).
#ifndef XLMR_KERNELS_CPU_ROW_DOT_H_
#define XLMR_KERNELS_CPU_ROW_DOT_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// [in] a, b [N,H] f32. Returns dots [N] f32.
Tensor RowDots(const Tensor& a, const Tensor& b);
// [in] d_dots [N] f32; a, b [N,H] f32. [out] da, db [N,H] f32 (may be views), overwritten:
// da[i,:] = d_dots[i] * b[i,:], db[i,:] = d_dots[i] * a[i,:].
void RowDotsBackward(const Tensor& d_dots, const Tensor& a, const Tensor& b, Tensor* da, Tensor* db);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_ROW_DOT_H_
