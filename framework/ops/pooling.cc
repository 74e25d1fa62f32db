#include "framework/ops/pooling.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/pooling.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/pooling.h"
#endif

namespace xlmr::ops {
namespace {

void CheckMask(const char* op, const Tensor& mask, int64_t batch) {
  XLMR_CHECK(mask.defined() && mask.dtype() == DType::kI32 && mask.rank() == 2 && mask.dim(0) == batch)
      << op << ": mask must be [B, S] i32 with B = " << batch << ", is "
      << (mask.defined() ? ShapeString(mask.shape()) : std::string("undefined"));
}

void CheckCuSeqlens(const char* op, const Tensor& cu_seqlens) {
  XLMR_CHECK(cu_seqlens.defined() && cu_seqlens.dtype() == DType::kI32 && cu_seqlens.rank() == 1 &&
             cu_seqlens.numel() >= 1)
      << op << ": cu_seqlens must be [B + 1] i32";
}

}  // namespace

Tensor MaskedMeanPool(const Tensor& x, const Tensor& mask) {
  constexpr const char* kOp = "ops::MaskedMeanPool";
  const Device device = CommonDevice(kOp, {x, mask});
  XLMR_CHECK(x.defined() && x.dtype() == DType::kF32 && x.rank() == 3)
      << kOp << ": x must be [B, S, H] f32";
  CheckMask(kOp, mask, x.dim(0));
  XLMR_CHECK(mask.dim(1) == x.dim(1)) << kOp << ": mask " << ShapeString(mask.shape()) << " for x "
                                      << ShapeString(x.shape());
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::MaskedMeanPool(x, mask); },
      XLMR_CUDA_KERNEL(kernels::cuda::MaskedMeanPool(x, mask)));
}

Tensor MaskedMeanPoolBackward(const Tensor& dy, const Tensor& mask) {
  constexpr const char* kOp = "ops::MaskedMeanPoolBackward";
  const Device device = CommonDevice(kOp, {dy, mask});
  XLMR_CHECK(dy.defined() && dy.dtype() == DType::kF32 && dy.rank() == 2)
      << kOp << ": dy must be [B, H] f32";
  CheckMask(kOp, mask, dy.dim(0));
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::MaskedMeanPoolBackward(dy, mask); },
      XLMR_CUDA_KERNEL(kernels::cuda::MaskedMeanPoolBackward(dy, mask)));
}

Tensor SegmentMeanPool(const Tensor& x, const Tensor& cu_seqlens) {
  constexpr const char* kOp = "ops::SegmentMeanPool";
  const Device device = CommonDevice(kOp, {x, cu_seqlens});
  XLMR_CHECK(x.defined() && x.dtype() == DType::kF32 && x.rank() == 2)
      << kOp << ": x must be [T, H] f32";
  CheckCuSeqlens(kOp, cu_seqlens);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::SegmentMeanPool(x, cu_seqlens); },
      XLMR_CUDA_KERNEL(kernels::cuda::SegmentMeanPool(x, cu_seqlens)));
}

Tensor SegmentMeanPoolBackward(const Tensor& dy, const Tensor& cu_seqlens, int64_t rows) {
  constexpr const char* kOp = "ops::SegmentMeanPoolBackward";
  const Device device = CommonDevice(kOp, {dy, cu_seqlens});
  CheckCuSeqlens(kOp, cu_seqlens);
  CheckTensor(kOp, "dy", dy, DType::kF32, {cu_seqlens.numel() - 1, dy.rank() == 2 ? dy.dim(1) : 0});
  XLMR_CHECK(rows >= 0) << kOp << ": rows " << rows;
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::SegmentMeanPoolBackward(dy, cu_seqlens, rows); },
      XLMR_CUDA_KERNEL(kernels::cuda::SegmentMeanPoolBackward(dy, cu_seqlens, rows)));
}

}  // namespace xlmr::ops
