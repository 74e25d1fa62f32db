#include "kernels/cpu/layer_norm.h"

#include <cmath>
#include <vector>

#include "kernels/cpu/float_access.h"

namespace xlmr::kernels::cpu {
namespace {

struct RowStatistics {
  float mean;
  float rstd;
};

// Biased variance (divide by H) and eps inside the square root, as torch. The sums run in
// double so that the reference is limited by fp32 storage, not by summation error.
RowStatistics NormaliseStatistics(const float* row, int64_t width, float eps) {
  double sum = 0.0;
  for (int64_t j = 0; j < width; ++j) sum += row[j];
  const double mean = sum / width;
  double squares = 0.0;
  for (int64_t j = 0; j < width; ++j) squares += (row[j] - mean) * (row[j] - mean);
  const double variance = squares / width;
  return {static_cast<float>(mean), static_cast<float>(1.0 / std::sqrt(variance + eps))};
}

}  // namespace

void LayerNormForward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                      DType out_dtype, Tensor* y, Tensor* mean, Tensor* rstd) {
  const int64_t width = gamma.numel();
  const int64_t rows = x.numel() / width;
  *y = Tensor::Zeros(x.shape(), out_dtype, x.device(), MemoryCategory::kActivations);
  *mean = Tensor::Zeros({rows}, DType::kF32, x.device(), MemoryCategory::kActivations);
  *rstd = Tensor::Zeros({rows}, DType::kF32, x.device(), MemoryCategory::kActivations);
  const float* g = gamma.data<float>();
  const float* b = beta.data<float>();
  std::vector<float> in(static_cast<size_t>(width)), out(static_cast<size_t>(width));
  for (int64_t r = 0; r < rows; ++r) {
    LoadFloats(x, r * width, width, in.data());
    const RowStatistics stats = NormaliseStatistics(in.data(), width, eps);
    for (int64_t j = 0; j < width; ++j) out[j] = (in[j] - stats.mean) * stats.rstd * g[j] + b[j];
    StoreFloats(out.data(), r * width, width, y);
    mean->data<float>()[r] = stats.mean;
    rstd->data<float>()[r] = stats.rstd;
  }
}

// With xhat = (x - mean) * rstd and g = dy * gamma:
//   dx = rstd * (g - mean_j(g) - xhat * mean_j(g * xhat)),  dgamma += dy * xhat,  dbeta += dy.
Tensor LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, Tensor* dgamma, Tensor* dbeta) {
  const int64_t width = gamma.numel();
  const int64_t rows = x.numel() / width;
  Tensor dx = Tensor::Zeros(x.shape(), x.dtype(), x.device(), MemoryCategory::kActivations);
  const float* g = gamma.data<float>();
  std::vector<float> xhat(width), grad(width), dx_row(width);
  std::vector<double> dgamma_sum(width, 0.0), dbeta_sum(width, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float row_mean = mean.data<float>()[r];
    const float row_rstd = rstd.data<float>()[r];
    LoadFloats(x, r * width, width, xhat.data());
    LoadFloats(dy, r * width, width, grad.data());
    double grad_sum = 0.0, grad_xhat_sum = 0.0;
    for (int64_t j = 0; j < width; ++j) {
      xhat[j] = (xhat[j] - row_mean) * row_rstd;
      dgamma_sum[j] += double{grad[j]} * xhat[j];
      dbeta_sum[j] += grad[j];
      grad[j] *= g[j];
      grad_sum += grad[j];
      grad_xhat_sum += double{grad[j]} * xhat[j];
    }
    const float grad_mean = static_cast<float>(grad_sum / width);
    const float grad_xhat_mean = static_cast<float>(grad_xhat_sum / width);
    for (int64_t j = 0; j < width; ++j) {
      dx_row[j] = row_rstd * (grad[j] - grad_mean - xhat[j] * grad_xhat_mean);
    }
    StoreFloats(dx_row.data(), r * width, width, &dx);
  }
  for (int64_t j = 0; j < width; ++j) {
    dgamma->data<float>()[j] += static_cast<float>(dgamma_sum[j]);
    dbeta->data<float>()[j] += static_cast<float>(dbeta_sum[j]);
  }
  return dx;
}

}  // namespace xlmr::kernels::cpu
