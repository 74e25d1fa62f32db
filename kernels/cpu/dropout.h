// CPU kernels of inverted dropout with a stateless Philox mask (framework/random/philox.h).
//
// Element i (flat row-major index) is kept iff DropoutUniform(key, i) >= p; kept elements are
// scaled by DropoutScale(p) = 1 / (1 - p) (kernels/common/dropout_scale.h). No mask is stored: the backward regenerates it from the same key.
// Called through framework/ops/dropout.h, which checks p and dtypes and handles p == 0.
#ifndef XLMR_KERNELS_CPU_DROPOUT_H_
#define XLMR_KERNELS_CPU_DROPOUT_H_

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"
#include "kernels/common/dropout_scale.h"

namespace xlmr::kernels::cpu {

// [in] x f32|f16|bf16, 0 < p < 1. Returns y (x's shape and dtype): x * DropoutScale(p) in fp32
// where kept, else 0, rounded once. The same function applied to dy is the backward.
Tensor DropoutApply(const Tensor& x, float p, const DropoutKey& key);

// The row-placed form (ops::DropoutRows): x is [rows, width] row-major, row r's element c is
// mask element row_slots[r] * width + c. [in] row_slots i32 [rows], each in [0, num_slots)
// (checked here, row by row). Same rounding as DropoutApply.
Tensor DropoutApplyRows(const Tensor& x, float p, const DropoutKey& key, const Tensor& row_slots,
                        int64_t num_slots);

}  // namespace xlmr::kernels::cpu

#endif  // XLMR_KERNELS_CPU_DROPOUT_H_
