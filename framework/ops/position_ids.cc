#include "framework/ops/position_ids.h"

#include "framework/ops/dispatch.h"
#include "kernels/cpu/position_ids.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/position_ids.h"
#endif

namespace xlmr::ops {

Tensor RobertaPositionIds(const Tensor& input_ids, int32_t pad_id) {
  constexpr const char* kOp = "ops::RobertaPositionIds";
  XLMR_CHECK(input_ids.defined()) << kOp << ": input_ids is undefined";
  XLMR_CHECK(input_ids.dtype() == DType::kI32 && input_ids.rank() == 2)
      << kOp << ": input_ids must be [B,S] i32, is " << DTypeName(input_ids.dtype()) << " "
      << ShapeString(input_ids.shape());
  return DispatchByDevice(
      kOp, input_ids.device(), [&] { return kernels::cpu::RobertaPositionIds(input_ids, pad_id); },
      XLMR_CUDA_KERNEL(kernels::cuda::RobertaPositionIds(input_ids, pad_id)));
}

}  // namespace xlmr::ops
