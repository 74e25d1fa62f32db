#include "framework/ops/select_token.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "framework/ops/embedding.h"
#include "kernels/cpu/select_token.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/select_token.h"
#endif

namespace xlmr::ops {

Tensor SelectFirstToken(const Tensor& x) {
  constexpr const char* kOp = "ops::SelectFirstToken";
  const Device device = CommonDevice(kOp, {x});
  CheckActivation(kOp, "x", x);
  XLMR_CHECK(x.rank() == 3 && x.dim(1) >= 1)
      << kOp << ": x must be [B, S, H] with S >= 1, is " << ShapeString(x.shape());
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::SelectFirstToken(x); },
      XLMR_CUDA_KERNEL(kernels::cuda::SelectFirstToken(x)));
}

Tensor SelectFirstTokenBackward(const Tensor& dy, const Shape& x_shape) {
  constexpr const char* kOp = "ops::SelectFirstTokenBackward";
  const Device device = CommonDevice(kOp, {dy});
  CheckActivation(kOp, "dy", dy);
  XLMR_CHECK(x_shape.size() == 3 && x_shape[1] >= 1)
      << kOp << ": x_shape must be [B, S, H] with S >= 1, is " << ShapeString(x_shape);
  CheckTensor(kOp, "dy", dy, dy.dtype(), {x_shape[0], x_shape[2]});
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::SelectFirstTokenBackward(dy, x_shape); },
      XLMR_CUDA_KERNEL(kernels::cuda::SelectFirstTokenBackward(dy, x_shape)));
}

Tensor SelectRows(const Tensor& x, const Tensor& rows) {
  return Embedding(x, rows, DType::kF32);
}

Tensor SelectRowsBackward(const Tensor& dy, const Tensor& rows, int64_t x_rows) {
  Tensor dx = Tensor::Zeros({x_rows, dy.dim(-1)}, DType::kF32, dy.device());
  EmbeddingBackward(dy, rows, /*padding_idx=*/-1, &dx);
  return dx;
}

}  // namespace xlmr::ops
