// CUDA kernels of row normalisation (framework/ops/row_normalize.h). Plain C++ header; the
// kernels are in row_normalize.cu. One thread per row runs kernels/common/row_normalize.h, the
// CPU kernel's arithmetic, so both backends give the same bits. Rows are few (a batch's
// sentence embeddings), so a thread per row is enough. Asynchronous, on the compute stream.
#ifndef XLMR_KERNELS_CUDA_ROW_NORMALIZE_H_
#define XLMR_KERNELS_CUDA_ROW_NORMALIZE_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// [in] x [N,H] f32 CUDA. Returns y [N,H] f32.
Tensor NormalizeRows(const Tensor& x, float multiplier, float eps);
// [in] dy, x [N,H] f32 CUDA. [out] dx [N,H] f32 CUDA (may be a view), overwritten.
void NormalizeRowsBackward(const Tensor& dy, const Tensor& x, float multiplier, float eps, Tensor* dx);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_ROW_NORMALIZE_H_
