// CPU kernels of row normalisation (framework/ops/row_normalize.h): y = (x / max(||x||, eps)) *
// multiplier per row, as torch.nn.functional.normalize followed by a product. Each row's sum of
// squares is a float sum in column order, and every operation is one IEEE float operation with no
// fused multiply-add, which the CUDA kernels repeat, so both backends give the same bits.
// Gradient convention: dx is written into a caller's tensor (`=`).
#ifndef XLMR_KERNELS_CPU_ROW_NORMALIZE_H_
#define XLMR_KERNELS_CPU_ROW_NORMALIZE_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cpu {

// [in] x [N,H] f32. Returns y [N,H] f32.
Tensor NormalizeRows(const Tensor& x, float multiplier, float eps);
// [in] dy, x [N,H] f32. [out] dx [N,H] f32 (may be a view), overwritten.
void NormalizeRowsBackward(const Tensor& dy, const Tensor& x, float multiplier, float eps, Tensor* dx);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_ROW_NORMALIZE_H_
