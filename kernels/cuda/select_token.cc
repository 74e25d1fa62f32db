#include "kernels/cuda/select_token.h"

#include <cuda_runtime_api.h>

#include <cstddef>

#include "framework/core/check.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_context.h"

namespace xlmr::kernels::cuda {
namespace {

// Copies `rows` rows of `row_bytes` bytes between device buffers with the given row pitches,
// as one cudaMemcpy2DAsync on the compute stream.
void CopyRows(const void* src, size_t src_pitch, void* dst, size_t dst_pitch, int64_t rows,
              size_t row_bytes) {
  if (rows == 0 || row_bytes == 0) return;
  CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes,
                               static_cast<size_t>(rows), cudaMemcpyDeviceToDevice,
                               CudaContext::Current().compute_stream()));
}

}  // namespace

Tensor SelectFirstToken(const Tensor& x) {
  XLMR_CHECK(x.device() == Device::kCuda && x.rank() == 3 && x.dim(1) >= 1)
      << "cuda::SelectFirstToken: x must be a [B, S, H] CUDA tensor with S >= 1, is "
      << ShapeString(x.shape());
  const int64_t batch = x.dim(0), seq = x.dim(1), hidden = x.dim(2);
  // The copy below fills all `batch` rows of y.
  Tensor y =
      Tensor::Empty({batch, hidden}, x.dtype(), Device::kCuda, MemoryCategory::kActivations);
  const size_t row_bytes = static_cast<size_t>(hidden) * SizeOf(x.dtype());
  CopyRows(x.raw_data(), seq * row_bytes, y.raw_data(), row_bytes, batch, row_bytes);
  return y;
}

Tensor SelectFirstTokenBackward(const Tensor& dy, const Shape& x_shape) {
  XLMR_CHECK(x_shape.size() == 3 && x_shape[1] >= 1)
      << "cuda::SelectFirstTokenBackward: x_shape must be [B, S, H] with S >= 1, is "
      << ShapeString(x_shape);
  const int64_t batch = x_shape[0], seq = x_shape[1], hidden = x_shape[2];
  XLMR_CHECK(dy.device() == Device::kCuda && dy.shape() == Shape({batch, hidden}))
      << "cuda::SelectFirstTokenBackward: dy must be a [B, H] CUDA tensor, is "
      << ShapeString(dy.shape());
  // Zeros: only token 0 of each sequence is written; the other rows' gradient is 0.
  Tensor dx = Tensor::Zeros(x_shape, dy.dtype(), Device::kCuda, MemoryCategory::kActivations);
  const size_t row_bytes = static_cast<size_t>(hidden) * SizeOf(dy.dtype());
  CopyRows(dy.raw_data(), row_bytes, dx.raw_data(), seq * row_bytes, batch, row_bytes);
  return dx;
}

}  // namespace xlmr::kernels::cuda
