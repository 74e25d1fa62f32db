#include "kernels/cpu/row_normalize.h"

#include "kernels/common/row_normalize.h"

namespace xlmr::kernels::cpu {

Tensor NormalizeRows(const Tensor& x, float multiplier, float eps) {
  const int64_t rows = x.dim(0), width = x.dim(1);
  Tensor y = Tensor::Empty(x.shape(), DType::kF32, Device::kCpu, MemoryCategory::kActivations);
  for (int64_t r = 0; r < rows; ++r) {
    NormalizeRow(x.data<float>() + r * width, width, multiplier, eps, y.data<float>() + r * width);
  }
  return y;
}

void NormalizeRowsBackward(const Tensor& dy, const Tensor& x, float multiplier, float eps, Tensor* dx) {
  const int64_t rows = x.dim(0), width = x.dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    NormalizeRowBackward(dy.data<float>() + r * width, x.data<float>() + r * width, width, multiplier,
                         eps, dx->data<float>() + r * width);
  }
}

}  // namespace xlmr::kernels::cpu
