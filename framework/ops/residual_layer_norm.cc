#include "framework/ops/residual_layer_norm.h"

#include "framework/ops/checks.h"
#include "framework/ops/dispatch.h"
#include "framework/ops/dropout.h"
#include "framework/ops/elementwise.h"
#include "framework/ops/layer_norm.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/residual_layer_norm.h"
#endif

namespace xlmr::ops {
namespace {

// The site as the ops it is made of (the CPU, and CUDA widths the kernel does not take).
ResidualLayerNormOutput Composed(const Tensor& x, const Tensor& residual, float p, const DropoutKey& key,
                                 const Tensor& row_slots, int64_t num_slots, const Tensor& gamma, const Tensor& beta,
                                 float eps, DType half_dtype) {
  ResidualLayerNormOutput out;
  out.sum = Add(DropoutRows(x, p, key, row_slots, num_slots), residual, DType::kF32);
  LayerNormOutput norm = LayerNorm(out.sum, gamma, beta, eps, DType::kF32);
  out.y = norm.y;
  out.mean = norm.mean;
  out.rstd = norm.rstd;
  if (half_dtype != DType::kF32) out.y_half = Cast(out.y, half_dtype);
  return out;
}

ResidualLayerNormGrads ComposedBackward(const Tensor& dy, const Tensor& sum, const Tensor& mean, const Tensor& rstd,
                                        const Tensor& gamma, float p, const DropoutKey& key, const Tensor& row_slots,
                                        int64_t num_slots, DType x_dtype, Tensor* dgamma, Tensor* dbeta) {
  ResidualLayerNormGrads grads;
  grads.d_sum = LayerNormBackward(dy, sum, gamma, mean, rstd, dgamma, dbeta);
  const int64_t width = sum.dim(-1);
  const Tensor rows = grads.d_sum.Reshaped({width == 0 ? 0 : sum.numel() / width, width});
  grads.d_x = DropoutRowsBackward(Cast(rows, x_dtype), p, key, row_slots, num_slots).Reshaped(sum.shape());
  return grads;
}

#ifdef XLMR_WITH_CUDA
ResidualLayerNormOutput Fused(const Tensor& x, const Tensor& residual, float p, const DropoutKey& key,
                              const Tensor& row_slots, int64_t num_slots, const Tensor& gamma, const Tensor& beta,
                              float eps, DType half_dtype) {
  const int64_t width = x.dim(-1);
  const Shape rows_shape = {x.numel() / width, width};
  ResidualLayerNormOutput out;
  kernels::cuda::ResidualLayerNormForward(x.Reshaped(rows_shape), residual.Reshaped(rows_shape), p, key, row_slots,
                                          num_slots, gamma, beta, eps, half_dtype, &out.sum, &out.y, &out.y_half,
                                          &out.mean, &out.rstd);
  out.sum = out.sum.Reshaped(x.shape());
  out.y = out.y.Reshaped(x.shape());
  if (out.y_half.defined()) out.y_half = out.y_half.Reshaped(x.shape());
  return out;
}
#endif

#ifdef XLMR_WITH_CUDA
ResidualLayerNormGrads FusedBackward(const Tensor& dy, const Tensor& sum, const Tensor& mean, const Tensor& rstd,
                                     const Tensor& gamma, float p, const DropoutKey& key, const Tensor& row_slots,
                                     int64_t num_slots, DType x_dtype, Tensor* dgamma, Tensor* dbeta) {
  const int64_t width = sum.dim(-1);
  const Shape rows_shape = {sum.numel() / width, width};
  ResidualLayerNormGrads grads;
  kernels::cuda::ResidualLayerNormBackward(dy.Reshaped(rows_shape), sum.Reshaped(rows_shape), mean, rstd, gamma, p,
                                           key, row_slots, num_slots, x_dtype, dgamma, dbeta, &grads.d_sum,
                                           &grads.d_x);
  grads.d_sum = grads.d_sum.Reshaped(sum.shape());
  grads.d_x = grads.d_x.Reshaped(sum.shape());
  return grads;
}
#endif

// Whether `device` runs the site as one kernel.
bool RunsFused(Device device, int64_t width) {
#ifdef XLMR_WITH_CUDA
  return device == Device::kCuda && kernels::cuda::ResidualLayerNormFuses(width);
#else
  (void)device;
  (void)width;
  return false;
#endif
}

}  // namespace

ResidualLayerNormOutput DropoutAddLayerNorm(const Tensor& x, const Tensor& residual, float p, const DropoutKey& key,
                                            const Tensor& row_slots, int64_t num_slots, const Tensor& gamma,
                                            const Tensor& beta, float eps, DType half_dtype) {
  constexpr const char* kOp = "ops::DropoutAddLayerNorm";
  const Device device = CommonDevice(kOp, {x, residual, gamma, beta});
  CheckActivation(kOp, "x", x);
  CheckSameShape(kOp, "x", x, "residual", residual);
  XLMR_CHECK(residual.dtype() == DType::kF32) << kOp << ": residual must be f32";
  XLMR_CHECK(x.rank() >= 1) << kOp << ": x must have rank >= 1";
  CheckOutputDType(kOp, half_dtype);
  const int64_t width = x.dim(-1);
  if (!RunsFused(device, width) || x.numel() == 0) {
    return Composed(x, residual, p, key, row_slots, num_slots, gamma, beta, eps, half_dtype);
  }
  CheckTensor(kOp, "gamma", gamma, DType::kF32, {width});
  CheckTensor(kOp, "beta", beta, DType::kF32, {width});
  XLMR_CHECK(eps > 0.0f) << kOp << ": eps must be positive, is " << eps;
  return DispatchByDevice(
      kOp, device, [&] { return Composed(x, residual, p, key, row_slots, num_slots, gamma, beta, eps, half_dtype); },
      XLMR_CUDA_KERNEL(Fused(x, residual, p, key, row_slots, num_slots, gamma, beta, eps, half_dtype)));
}

ResidualLayerNormGrads DropoutAddLayerNormBackward(const Tensor& dy, const Tensor& sum, const Tensor& mean,
                                                   const Tensor& rstd, const Tensor& gamma, float p,
                                                   const DropoutKey& key, const Tensor& row_slots, int64_t num_slots,
                                                   DType x_dtype, Tensor* dgamma, Tensor* dbeta) {
  constexpr const char* kOp = "ops::DropoutAddLayerNormBackward";
  XLMR_CHECK(dgamma != nullptr && dbeta != nullptr) << kOp << ": dgamma and dbeta are required";
  const Device device = CommonDevice(kOp, {dy, sum, mean, rstd, gamma, *dgamma, *dbeta});
  CheckOutputDType(kOp, x_dtype);
  const int64_t width = sum.rank() >= 1 ? sum.dim(-1) : 0;
  auto composed = [&] { return ComposedBackward(dy, sum, mean, rstd, gamma, p, key, row_slots, num_slots, x_dtype,
                                                dgamma, dbeta); };
  if (!RunsFused(device, width) || sum.numel() == 0 || dy.dtype() != DType::kF32) return composed();
  CheckSameShape(kOp, "dy", dy, "sum", sum);
  CheckTensor(kOp, "sum", sum, DType::kF32, sum.shape());
  CheckTensor(kOp, "gamma", gamma, DType::kF32, {width});
  CheckTensor(kOp, "dgamma", *dgamma, DType::kF32, {width});
  CheckTensor(kOp, "dbeta", *dbeta, DType::kF32, {width});
  const int64_t rows = sum.numel() / width;
  CheckTensor(kOp, "mean", mean, DType::kF32, {rows});
  CheckTensor(kOp, "rstd", rstd, DType::kF32, {rows});
  return DispatchByDevice(
      kOp, device, composed,
      XLMR_CUDA_KERNEL(FusedBackward(dy, sum, mean, rstd, gamma, p, key, row_slots, num_slots, x_dtype, dgamma,
                                     dbeta)));
}

}  // namespace xlmr::ops
