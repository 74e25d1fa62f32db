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

Tensor RobertaPackedPositionIds(const Tensor& cu_seqlens, int32_t pad_id, Device device) {
  constexpr const char* kOp = "ops::RobertaPackedPositionIds";
  XLMR_CHECK(cu_seqlens.defined() && cu_seqlens.device() == Device::kCpu &&
             cu_seqlens.dtype() == DType::kI32 && cu_seqlens.rank() == 1 && cu_seqlens.numel() >= 1)
      << kOp << ": cu_seqlens must be [B + 1] i32 on the host";
  const int32_t* cu = cu_seqlens.data<int32_t>();
  const int64_t sequences = cu_seqlens.numel() - 1;
  Tensor positions = Tensor::Zeros({int64_t{cu[sequences]}}, DType::kI32);
  int32_t* out = positions.data<int32_t>();
  for (int64_t b = 0; b < sequences; ++b) {
    for (int32_t t = cu[b]; t < cu[b + 1]; ++t) out[t] = pad_id + 1 + (t - cu[b]);
  }
  return device == Device::kCpu ? positions : positions.ToDevice(device);
}

Tensor AbsolutePositionIds(const Tensor& input_ids) {
  XLMR_CHECK(input_ids.defined() && input_ids.rank() == 2)
      << "ops::AbsolutePositionIds: input_ids must be [B,S]";
  const int64_t rows = input_ids.dim(0), length = input_ids.dim(1);
  Tensor positions = Tensor::Zeros({rows, length}, DType::kI32);
  int32_t* out = positions.data<int32_t>();
  for (int64_t b = 0; b < rows; ++b) {
    for (int64_t s = 0; s < length; ++s) out[b * length + s] = static_cast<int32_t>(s);
  }
  return input_ids.device() == Device::kCpu ? positions : positions.ToDevice(input_ids.device());
}

}  // namespace xlmr::ops
