#include "framework/ops/layer_norm.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "kernels/cpu/layer_norm.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/layer_norm.h"
#endif

namespace xlmr::ops {
namespace {

// x [..., H] and gamma [H]; returns the number of rows.
int64_t CheckNormalised(const char* op, const Tensor& x, const Tensor& gamma) {
  CheckActivation(op, "x", x);
  XLMR_CHECK(x.rank() >= 1) << op << ": x must have rank >= 1";
  const int64_t width = x.dim(-1);
  CheckTensor(op, "gamma", gamma, DType::kF32, {width});
  return width == 0 ? 0 : x.numel() / width;
}

#ifdef XLMR_WITH_CUDA
// The CUDA forward, returning its three outputs like the op.
LayerNormOutput CudaLayerNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                              DType out_dtype) {
  LayerNormOutput result;
  kernels::cuda::LayerNormForward(x, gamma, beta, eps, out_dtype, &result.y, &result.mean,
                                  &result.rstd);
  return result;
}
#endif

}  // namespace

LayerNormOutput LayerNorm(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                          DType out_dtype) {
  constexpr const char* kOp = "ops::LayerNorm";
  const Device device = CommonDevice(kOp, {x, gamma, beta});
  CheckNormalised(kOp, x, gamma);
  CheckTensor(kOp, "beta", beta, DType::kF32, gamma.shape());
  CheckOutputDType(kOp, out_dtype);
  XLMR_CHECK(eps > 0.0f) << kOp << ": eps must be positive, is " << eps;
  return DispatchByDevice(
      kOp, device,
      [&] {
        LayerNormOutput result;
        kernels::cpu::LayerNormForward(x, gamma, beta, eps, out_dtype, &result.y, &result.mean,
                                       &result.rstd);
        return result;
      },
      XLMR_CUDA_KERNEL(CudaLayerNorm(x, gamma, beta, eps, out_dtype)));
}

Tensor LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, Tensor* dgamma, Tensor* dbeta) {
  constexpr const char* kOp = "ops::LayerNormBackward";
  XLMR_CHECK(dgamma != nullptr && dbeta != nullptr) << kOp << ": dgamma and dbeta are required";
  const Device device = CommonDevice(kOp, {dy, x, gamma, mean, rstd, *dgamma, *dbeta});
  const int64_t rows = CheckNormalised(kOp, x, gamma);
  CheckActivation(kOp, "dy", dy);
  CheckSameShape(kOp, "dy", dy, "x", x);
  CheckTensor(kOp, "mean", mean, DType::kF32, {rows});
  CheckTensor(kOp, "rstd", rstd, DType::kF32, {rows});
  CheckTensor(kOp, "dgamma", *dgamma, DType::kF32, gamma.shape());
  CheckTensor(kOp, "dbeta", *dbeta, DType::kF32, gamma.shape());
  return DispatchByDevice(
      kOp, device,
      [&] { return kernels::cpu::LayerNormBackward(dy, x, gamma, mean, rstd, dgamma, dbeta); },
      XLMR_CUDA_KERNEL(
          kernels::cuda::LayerNormBackward(dy, x, gamma, mean, rstd, dgamma, dbeta)));
}

}  // namespace xlmr::ops
