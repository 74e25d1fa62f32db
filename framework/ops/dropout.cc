#include "framework/ops/dropout.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/dropout.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/dropout.h"
#endif

namespace xlmr::ops {
namespace {

// Forward and backward are the same masked scaling of their input.
Tensor MaskAndScale(const char* op, const Tensor& input, float p, const DropoutKey& key) {
  const Device device = CommonDevice(op, {input});
  CheckActivation(op, "input", input);
  XLMR_CHECK(p >= 0.0f && p < 1.0f) << op << ": p must be in [0, 1), is " << p;
  XLMR_CHECK(input.numel() <= kMaxDropoutElements)
      << op << ": " << input.numel() << " elements exceed the dropout counter range";
  if (p == 0.0f) return input;
  return DispatchByDevice(
      op, device, [&] { return kernels::cpu::DropoutApply(input, p, key); },
      XLMR_CUDA_KERNEL(kernels::cuda::DropoutApply(input, p, key)));
}

Tensor MaskAndScaleRows(const char* op, const Tensor& input, float p, const DropoutKey& key,
                        const Tensor& row_slots, int64_t num_slots) {
  const Device device = CommonDevice(op, {input, row_slots});
  CheckActivation(op, "input", input);
  XLMR_CHECK(p >= 0.0f && p < 1.0f) << op << ": p must be in [0, 1), is " << p;
  XLMR_CHECK(row_slots.dtype() == DType::kI32 && row_slots.rank() == 1)
      << op << ": row_slots must be [rows] i32";
  const int64_t rows = row_slots.numel();
  XLMR_CHECK(input.rank() >= 1 && input.numel() == rows * input.dim(-1))
      << op << ": input " << ShapeString(input.shape()) << " is not " << rows << " rows";
  const int64_t width = input.dim(-1);
  XLMR_CHECK(num_slots >= 0 && num_slots * width <= kMaxDropoutElements)
      << op << ": " << num_slots << " slots of " << width << " exceed the dropout counter range";
  if (p == 0.0f) return input;
  return DispatchByDevice(
      op, device,
      [&] { return kernels::cpu::DropoutApplyRows(input, p, key, row_slots, num_slots); },
      XLMR_CUDA_KERNEL(kernels::cuda::DropoutApplyRows(input, p, key, row_slots, num_slots)));
}

}  // namespace

Tensor DropoutRows(const Tensor& x, float p, const DropoutKey& key, const Tensor& row_slots,
                   int64_t num_slots) {
  return MaskAndScaleRows("ops::DropoutRows", x, p, key, row_slots, num_slots);
}

Tensor DropoutRowsBackward(const Tensor& dy, float p, const DropoutKey& key,
                           const Tensor& row_slots, int64_t num_slots) {
  return MaskAndScaleRows("ops::DropoutRowsBackward", dy, p, key, row_slots, num_slots);
}

Tensor Dropout(const Tensor& x, float p, const DropoutKey& key) {
  return MaskAndScale("ops::Dropout", x, p, key);
}

Tensor DropoutBackward(const Tensor& dy, float p, const DropoutKey& key) {
  return MaskAndScale("ops::DropoutBackward", dy, p, key);
}

}  // namespace xlmr::ops
