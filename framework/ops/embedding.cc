#include "framework/ops/embedding.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/embedding.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/embedding.h"
#endif

namespace xlmr::ops {
namespace {

void CheckTableAndIds(const char* op, const char* table_name, const Tensor& table,
                      const Tensor& ids) {
  XLMR_CHECK(table.defined() && table.dtype() == DType::kF32 && table.rank() == 2)
      << op << ": " << table_name << " must be [V, H] f32";
  XLMR_CHECK(ids.defined() && ids.dtype() == DType::kI32) << op << ": ids must be i32";
}

}  // namespace

Tensor Embedding(const Tensor& table, const Tensor& ids, DType out_dtype) {
  constexpr const char* kOp = "ops::Embedding";
  const Device device = CommonDevice(kOp, {table, ids});
  CheckTableAndIds(kOp, "table", table, ids);
  CheckOutputDType(kOp, out_dtype);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::EmbeddingForward(table, ids, out_dtype); },
      XLMR_CUDA_KERNEL(kernels::cuda::EmbeddingForward(table, ids, out_dtype)));
}

void EmbeddingBackward(const Tensor& dy, const Tensor& ids, int64_t padding_idx, Tensor* dtable) {
  constexpr const char* kOp = "ops::EmbeddingBackward";
  XLMR_CHECK(dtable != nullptr) << kOp << ": dtable is required";
  const Device device = CommonDevice(kOp, {dy, ids, *dtable});
  CheckTableAndIds(kOp, "dtable", *dtable, ids);
  CheckActivation(kOp, "dy", dy);
  Shape dy_shape = ids.shape();
  dy_shape.push_back(dtable->dim(1));
  XLMR_CHECK(dy.shape() == dy_shape) << kOp << ": dy must have shape " << ShapeString(dy_shape)
                                     << ", has " << ShapeString(dy.shape());
  DispatchByDevice(
      kOp, device, [&] { kernels::cpu::EmbeddingBackward(dy, ids, padding_idx, dtable); },
      XLMR_CUDA_KERNEL(kernels::cuda::EmbeddingBackward(dy, ids, padding_idx, dtable)));
}

}  // namespace xlmr::ops
