// CUDA kernels of row dot products (framework/ops/row_dot.h). Plain C++ header; the kernels are
// in row_dot.cu. The forward runs kernels/common/row_dot.h's column-order sum with one thread
// per row, the CPU kernel's arithmetic, so both backends give the same bits; rows are few (a
// batch's sentence pairs), so a thread per row is enough. The backward is one rounded product
// per element, a thread per element. Asynchronous, on the compute stream.
#ifndef XLMR_KERNELS_CUDA_ROW_DOT_H_
#define XLMR_KERNELS_CUDA_ROW_DOT_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// [in] a, b [N,H] f32 CUDA. Returns dots [N] f32.
Tensor RowDots(const Tensor& a, const Tensor& b);
// [in] d_dots [N] f32 CUDA; a, b [N,H] f32 CUDA. [out] da, db [N,H] f32 CUDA (may be views),
// overwritten: da[i,:] = d_dots[i] * b[i,:], db[i,:] = d_dots[i] * a[i,:].
void RowDotsBackward(const Tensor& d_dots, const Tensor& a, const Tensor& b, Tensor* da, Tensor* db);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_ROW_DOT_H_
