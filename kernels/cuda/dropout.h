// CUDA kernel of inverted dropout with the stateless Philox mask (framework/ops/dropout.h).
// Plain C++ header; the kernel is in dropout.cu.
//
// Same contract as kernels/cpu/dropout.h: element i (flat row-major index) is kept iff
// DropoutUniform(key, i) >= p, and kept elements are multiplied in fp32 by
// DropoutScale(p) = 1 / (1 - p) (kernels/common/dropout_scale.h). The device computes the same Philox4x32-10 words
// from the same packing (philox_device.cuh), so the mask and, in f32, f16 and bf16 alike, every
// output bit equal the CPU's. No mask is stored: the backward regenerates it from the key.
// Asynchronous: queued on CudaContext::Current().compute_stream().
#ifndef XLMR_KERNELS_CUDA_DROPOUT_H_
#define XLMR_KERNELS_CUDA_DROPOUT_H_

#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// [in] x f32|f16|bf16, CUDA, at most kMaxDropoutElements elements; 0 < p < 1; key.layer and
// key.op < 2^16. Returns y of x's shape and dtype (new kActivations tensor): x * scale where kept,
// else 0, rounded once. Applied to dy with the forward's key it is the backward.
Tensor DropoutApply(const Tensor& x, float p, const DropoutKey& key);

// The row-placed form (ops::DropoutRows, kernels/cpu/dropout.h's twin): x is [rows, width], row
// r's element c is mask element row_slots[r] * width + c. [in] row_slots i32 [rows] on the GPU,
// each in [0, num_slots) (the caller's promise: checking it would cost a synchronisation);
// num_slots * width <= kMaxDropoutElements. Same bits as the CPU.
Tensor DropoutApplyRows(const Tensor& x, float p, const DropoutKey& key, const Tensor& row_slots,
                        int64_t num_slots);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_DROPOUT_H_
