#include "kernels/cpu/position_ids.h"

namespace xlmr::kernels::cpu {

Tensor RobertaPositionIds(const Tensor& ids, int32_t pad_id) {
  Tensor positions = Tensor::Zeros(ids.shape(), DType::kI32);
  const int32_t* in = ids.data<int32_t>();
  int32_t* out = positions.data<int32_t>();
  const int64_t rows = ids.dim(0), cols = ids.dim(1);
  for (int64_t b = 0; b < rows; ++b) {
    int32_t count = 0;
    for (int64_t t = 0; t < cols; ++t) {
      const bool real = in[b * cols + t] != pad_id;
      count += real ? 1 : 0;
      out[b * cols + t] = real ? count + pad_id : pad_id;
    }
  }
  return positions;
}

}  // namespace xlmr::kernels::cpu
