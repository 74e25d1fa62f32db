// CUDA versions of the first-token selection for the classification head
// (framework/ops/select_token.h) and its backward. Pure data movement (strided device-to-device
// copies), bit-exact for every dtype, same contract as kernels/cpu/select_token.h.
// Gradient convention: dx is RETURNED (new tensor, `=`).
// Asynchronous: queued on CudaContext::Current().compute_stream().
#ifndef XLMR_KERNELS_CUDA_SELECT_TOKEN_H_
#define XLMR_KERNELS_CUDA_SELECT_TOKEN_H_

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// [in] x [B,S,H] CUDA, S >= 1. Returns [B,H] of x's dtype (new kActivations tensor): x[b, 0, :].
Tensor SelectFirstToken(const Tensor& x);

// [in] dy [B,H] CUDA; x_shape = {B, S, H}, S >= 1. Returns dx [B,S,H] of dy's dtype (new
// kActivations tensor): dy at token 0, zeros elsewhere.
Tensor SelectFirstTokenBackward(const Tensor& dy, const Shape& x_shape);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_SELECT_TOKEN_H_
