#include "kernels/cpu/row_dot.h"

#include "kernels/common/row_dot.h"

namespace xlmr::kernels::cpu {

Tensor RowDots(const Tensor& a, const Tensor& b) {
  const int64_t rows = a.dim(0), width = a.dim(1);
  Tensor dots = Tensor::Empty({rows}, DType::kF32, Device::kCpu, MemoryCategory::kActivations);
  for (int64_t r = 0; r < rows; ++r) {
    dots.data<float>()[r] = RowDot(a.data<float>() + r * width, b.data<float>() + r * width, width);
  }
  return dots;
}

void RowDotsBackward(const Tensor& d_dots, const Tensor& a, const Tensor& b, Tensor* da, Tensor* db) {
  const int64_t rows = a.dim(0), width = a.dim(1);
  for (int64_t r = 0; r < rows; ++r) {
    const float d = d_dots.data<float>()[r];
    const float* a_row = a.data<float>() + r * width;
    const float* b_row = b.data<float>() + r * width;
    float* da_row = da->data<float>() + r * width;
    float* db_row = db->data<float>() + r * width;
    for (int64_t j = 0; j < width; ++j) {
      da_row[j] = RowDotGradient(d, b_row[j]);
      db_row[j] = RowDotGradient(d, a_row[j]);
    }
  }
}

}  // namespace xlmr::kernels::cpu
