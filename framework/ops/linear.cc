#include "framework/ops/linear.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/linear.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/linear.h"
#endif

namespace xlmr::ops {
namespace {

// x [..., in] and weight [out, in]; returns out.
int64_t CheckLinearOperands(const char* op, const Tensor& x, const Tensor& weight) {
  CheckActivation(op, "x", x);
  CheckActivation(op, "weight", weight);
  XLMR_CHECK(x.rank() >= 2) << op << ": x must have rank >= 2, has " << ShapeString(x.shape());
  XLMR_CHECK(weight.rank() == 2) << op << ": weight must be [out, in], is "
                                 << ShapeString(weight.shape());
  XLMR_CHECK(x.dim(-1) == weight.dim(1))
      << op << ": x " << ShapeString(x.shape()) << " does not match weight "
      << ShapeString(weight.shape());
  // A product over no inputs: the CUDA Gemm requires K >= 1 (kernels/cuda/gemm.cc), so both
  // backends refuse it here.
  XLMR_CHECK(weight.dim(1) >= 1) << op << ": weight " << ShapeString(weight.shape())
                                 << " has no input columns";
  return weight.dim(0);
}

}  // namespace

Tensor Linear(const Tensor& x, const Tensor& weight, const Tensor& bias, DType out_dtype) {
  constexpr const char* kOp = "ops::Linear";
  const Device device = CommonDevice(kOp, {x, weight, bias});
  const int64_t out = CheckLinearOperands(kOp, x, weight);
  if (bias.defined()) {
    CheckTensor(kOp, "bias", bias, IsFloating(bias.dtype()) ? bias.dtype() : DType::kF32, {out});
  }
  CheckOutputDType(kOp, out_dtype);
  return DispatchByDevice(
      kOp, device, [&] { return kernels::cpu::LinearForward(x, weight, bias, out_dtype); },
      XLMR_CUDA_KERNEL(kernels::cuda::LinearForward(x, weight, bias, out_dtype)));
}

Tensor LinearBackward(const Tensor& dy, const Tensor& x, const Tensor& weight, Tensor* dweight,
                      Tensor* dbias, DType dx_dtype) {
  constexpr const char* kOp = "ops::LinearBackward";
  XLMR_CHECK(dweight != nullptr) << kOp << ": dweight is required";
  const Tensor dbias_or_none = dbias != nullptr ? *dbias : Tensor();
  const Device device = CommonDevice(kOp, {dy, x, weight, *dweight, dbias_or_none});
  const int64_t out = CheckLinearOperands(kOp, x, weight);
  CheckActivation(kOp, "dy", dy);
  Shape y_shape = x.shape();
  y_shape.back() = out;
  XLMR_CHECK(dy.shape() == y_shape) << kOp << ": dy must have shape " << ShapeString(y_shape)
                                    << ", has " << ShapeString(dy.shape());
  CheckTensor(kOp, "dweight", *dweight, DType::kF32, weight.shape());
  if (dbias != nullptr) CheckTensor(kOp, "dbias", *dbias, DType::kF32, {out});
  CheckOutputDType(kOp, dx_dtype);
  return DispatchByDevice(
      kOp, device,
      [&] { return kernels::cpu::LinearBackward(dy, x, weight, dweight, dbias, dx_dtype); },
      XLMR_CUDA_KERNEL(kernels::cuda::LinearBackward(dy, x, weight, dweight, dbias, dx_dtype)));
}

}  // namespace xlmr::ops
