// CUDA kernel of RoBERTa's position ids (framework/ops/position_ids.h), so that the ids never
// leave the device: no copy to the host, no stream sync, no copy back per micro-step.
// Plain C++ header (the kernel is in position_ids.cu).
#ifndef XLMR_KERNELS_CUDA_POSITION_IDS_H_
#define XLMR_KERNELS_CUDA_POSITION_IDS_H_

#include <cstdint>

#include "framework/tensor/tensor.h"

namespace xlmr::kernels::cuda {

// [in] ids [B,S] i32 on Device::kCuda. Returns a new [B,S] i32 CUDA tensor (kActivations):
// along each row, the k-th non-pad token gets pad_id + k (k from 1), every pad token pad_id;
// integer arithmetic, so bit for bit the CPU kernel's result. One warp per row, counting 32
// tokens per ballot. Asynchronous: queued on CudaContext::Current().compute_stream().
Tensor RobertaPositionIds(const Tensor& ids, int32_t pad_id);

}  // namespace xlmr::kernels::cuda

#endif  // XLMR_KERNELS_CUDA_POSITION_IDS_H_
