#include "kernels/cuda/position_ids.h"

#include <cuda_runtime.h>

#include <cstdint>

#include "framework/core/check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"

namespace xlmr::kernels::cuda {
namespace {

constexpr int kWarpsPerBlock = 8;

// Warp w of the grid numbers row w. Each pass covers 32 tokens: a ballot marks the non-pad
// ones, a lane's position counts the marked lanes below it plus the running count of earlier
// passes. A whole warp shares its row, so the early return and every ballot are warp-uniform.
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    PositionIdsKernel(const int32_t* __restrict__ ids, int64_t rows, int64_t cols, int32_t pad_id,
                      int32_t* __restrict__ positions) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (row >= rows) return;
  const unsigned lane = threadIdx.x % 32;
  const unsigned lanes_below = (1u << lane) - 1u;
  const int32_t* in = ids + row * cols;
  int32_t* out = positions + row * cols;
  int32_t count = 0;
  for (int64_t base = 0; base < cols; base += 32) {
    const int64_t t = base + lane;
    const bool real = t < cols && in[t] != pad_id;
    const unsigned marked = __ballot_sync(0xffffffffu, real);
    if (t < cols) out[t] = real ? pad_id + count + __popc(marked & lanes_below) + 1 : pad_id;
    count += __popc(marked);
  }
}

}  // namespace

Tensor RobertaPositionIds(const Tensor& ids, int32_t pad_id) {
  XLMR_CHECK(ids.device() == Device::kCuda && ids.dtype() == DType::kI32 && ids.rank() == 2)
      << "RobertaPositionIds: ids must be [B,S] i32 on cuda, is " << DTypeName(ids.dtype()) << " "
      << ShapeString(ids.shape()) << " on " << DeviceName(ids.device());
  // Written whole by the kernel: every (row, token) gets a value.
  Tensor positions = Tensor::Empty(ids.shape(), DType::kI32, Device::kCuda, MemoryCategory::kActivations);
  const int64_t rows = ids.dim(0), cols = ids.dim(1);
  if (rows == 0 || cols == 0) return positions;
  const int64_t blocks = (rows + kWarpsPerBlock - 1) / kWarpsPerBlock;
  PositionIdsKernel<<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0,
                      CudaContext::Current().compute_stream()>>>(
      ids.data<int32_t>(), rows, cols, pad_id, positions.data<int32_t>());
  KERNEL_LAUNCH_CHECK();
  return positions;
}

}  // namespace xlmr::kernels::cuda
