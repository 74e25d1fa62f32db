#include "kernels/cpu/select_token.h"

#include <cstring>

namespace xlmr::kernels::cpu {
namespace {

// Copies `rows` rows of `row_bytes` bytes from src (row stride src_stride bytes) to dst (row
// stride dst_stride bytes).
void CopyRows(const char* src, size_t src_stride, char* dst, size_t dst_stride, int64_t rows,
              size_t row_bytes) {
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst + r * dst_stride, src + r * src_stride, row_bytes);
  }
}

}  // namespace

Tensor SelectFirstToken(const Tensor& x) {
  const int64_t batch = x.dim(0), seq = x.dim(1), hidden = x.dim(2);
  Tensor y = Tensor::Zeros({batch, hidden}, x.dtype(), Device::kCpu, MemoryCategory::kActivations);
  const size_t row_bytes = static_cast<size_t>(hidden) * SizeOf(x.dtype());
  CopyRows(static_cast<const char*>(x.raw_data()), seq * row_bytes,
           static_cast<char*>(y.raw_data()), row_bytes, batch, row_bytes);
  return y;
}

Tensor SelectFirstTokenBackward(const Tensor& dy, const Shape& x_shape) {
  const int64_t batch = x_shape[0], seq = x_shape[1], hidden = x_shape[2];
  Tensor dx = Tensor::Zeros(x_shape, dy.dtype(), Device::kCpu, MemoryCategory::kActivations);
  const size_t row_bytes = static_cast<size_t>(hidden) * SizeOf(dy.dtype());
  CopyRows(static_cast<const char*>(dy.raw_data()), row_bytes, static_cast<char*>(dx.raw_data()),
           seq * row_bytes, batch, row_bytes);
  return dx;
}

}  // namespace xlmr::kernels::cpu
