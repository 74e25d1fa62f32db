// Row dot products: dots[i] = a[i,:] . b[i,:] for two [N, H] tensors. sentence-transformers'
// util.pairwise_cos_sim(a, b), the similarity of CoSENTLoss (and of CosineSimilarityLoss), is
// this op on the two normalised sides: RowDots(NormalizeRows(a, scale), NormalizeRows(b)) gives
// the loss's scaled scores (framework/ops/row_normalize.h; the scale may ride on one side).
// Same bits on every backend (kernels/common/row_dot.h): float sums in column order, every
// product and sum rounded on its own.
// Gradient convention: no parameters; da and db are written into the caller's tensors (`=`), so
// that several row blocks' gradients can land in one tensor's views.
#ifndef XLMR_FRAMEWORK_OPS_ROW_DOT_H_
#define XLMR_FRAMEWORK_OPS_ROW_DOT_H_

#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// [in] a, b [N,H] f32 on one device. Returns dots [N] f32 (new, kActivations):
// dots[i] = sum over j of a[i,j] * b[i,j], float sums in column order (same bits on every backend).
Tensor RowDots(const Tensor& a, const Tensor& b);

// [in] d_dots [N] f32, a and b as given to the forward.
// [out] da, db [N,H] f32 on their device (views are fine): overwritten, da[i,:] = d_dots[i] * b[i,:],
// db[i,:] = d_dots[i] * a[i,:].
void RowDotsBackward(const Tensor& d_dots, const Tensor& a, const Tensor& b, Tensor* da, Tensor* db);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_ROW_DOT_H_
