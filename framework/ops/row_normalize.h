// Row normalisation: y = (x / max(||x||_2, eps)) * multiplier for every row, which is
// torch.nn.functional.normalize(x, p=2, dim=1, eps) followed by a product: sentence-transformers'
// Normalize module (multiplier 1) and the cosine similarity of its losses (util.cos_sim
// normalises both sides; the loss's scale may ride on one of them as the multiplier).
// Same bits on every backend (kernels/common/row_normalize.h).
// Gradient convention: no parameters; dx is written into the caller's tensor (`=`), so that
// several row blocks' gradients can land in one tensor's views.
#ifndef XLMR_FRAMEWORK_OPS_ROW_NORMALIZE_H_
#define XLMR_FRAMEWORK_OPS_ROW_NORMALIZE_H_

#include "framework/tensor/tensor.h"

namespace xlmr::ops {

// F.normalize's default eps.
inline constexpr float kNormalizeEps = 1e-12f;

// [in] x [N,H] f32. Returns y [N,H] f32 (new, kActivations).
Tensor NormalizeRows(const Tensor& x, float multiplier = 1.0f, float eps = kNormalizeEps);

// [in] dy [N,H] f32, the gradient of y; x as given to the forward.
// [out] dx [N,H] f32 on x's device (a view is fine): overwritten with the gradient of x (no
// gradient flows through a norm below eps, as through torch's clamp_min).
void NormalizeRowsBackward(const Tensor& dy, const Tensor& x, float multiplier, Tensor* dx,
                           float eps = kNormalizeEps);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_ROW_NORMALIZE_H_
