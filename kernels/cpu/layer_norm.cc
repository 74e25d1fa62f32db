#include "kernels/cpu/layer_norm.h"

#include <algorithm>
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

// xhat = (x - mean) * rstd of row r of x, as the forward computed it.
void LoadNormalisedRow(const Tensor& x, const Tensor& mean, const Tensor& rstd, int64_t r,
                       int64_t width, float* xhat) {
  const float row_mean = mean.data<float>()[r];
  const float row_rstd = rstd.data<float>()[r];
  const float* row = FloatsOf(x, r * width, width, xhat);
  for (int64_t j = 0; j < width; ++j) xhat[j] = (row[j] - row_mean) * row_rstd;
}

// dx rows [begin, end): dx = rstd * (g - mean_j(g) - xhat * mean_j(g * xhat)), g = dy * gamma.
void LayerNormInputGradRows(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                            const Tensor& mean, const Tensor& rstd, int64_t begin, int64_t end,
                            Tensor* dx) {
  const int64_t width = gamma.numel();
  const float* g = gamma.data<float>();
  std::vector<float> xhat(width), grad(width), dx_row(width);
  for (int64_t r = begin; r < end; ++r) {
    const float row_rstd = rstd.data<float>()[r];
    LoadNormalisedRow(x, mean, rstd, r, width, xhat.data());
    const float* dy_row = FloatsOf(dy, r * width, width, grad.data());
    double grad_sum = 0.0, grad_xhat_sum = 0.0;
    for (int64_t j = 0; j < width; ++j) {
      grad[j] = dy_row[j] * g[j];
      grad_sum += grad[j];
      grad_xhat_sum += double{grad[j]} * xhat[j];
    }
    const float grad_mean = static_cast<float>(grad_sum / width);
    const float grad_xhat_mean = static_cast<float>(grad_xhat_sum / width);
    // f32: written in place; otherwise rounded once into dx.
    float* out = dx->dtype() == DType::kF32 ? dx->data<float>() + r * width : dx_row.data();
    for (int64_t j = 0; j < width; ++j) {
      out[j] = row_rstd * (grad[j] - grad_mean - xhat[j] * grad_xhat_mean);
    }
    if (dx->dtype() != DType::kF32) StoreFloats(dx_row.data(), r * width, width, dx);
  }
}

// dgamma[j] += sum_r dy * xhat and dbeta[j] += sum_r dy for columns [begin, end), each summed
// over the rows in order in double.
void LayerNormParamGradColumns(const Tensor& dy, const Tensor& x, const Tensor& mean,
                               const Tensor& rstd, int64_t begin, int64_t end, Tensor* dgamma,
                               Tensor* dbeta) {
  const int64_t width = dgamma->numel();
  const int64_t rows = x.numel() / width;
  const int64_t columns = end - begin;
  std::vector<float> x_part(columns), grad(columns);
  std::vector<double> dgamma_sum(columns, 0.0), dbeta_sum(columns, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const float row_mean = mean.data<float>()[r];
    const float row_rstd = rstd.data<float>()[r];
    const float* x_row = FloatsOf(x, r * width + begin, columns, x_part.data());
    const float* dy_row = FloatsOf(dy, r * width + begin, columns, grad.data());
    for (int64_t j = 0; j < columns; ++j) {
      const float xhat = (x_row[j] - row_mean) * row_rstd;
      dgamma_sum[j] += double{dy_row[j]} * xhat;
      dbeta_sum[j] += dy_row[j];
    }
  }
  for (int64_t j = 0; j < columns; ++j) {
    dgamma->data<float>()[begin + j] += static_cast<float>(dgamma_sum[j]);
    dbeta->data<float>()[begin + j] += static_cast<float>(dbeta_sum[j]);
  }
}

}  // namespace

void LayerNormForward(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                      DType out_dtype, Tensor* y, Tensor* mean, Tensor* rstd) {
  const int64_t width = gamma.numel();
  const int64_t rows = x.numel() / width;
  *y = Tensor::Empty(x.shape(), out_dtype, x.device(), MemoryCategory::kActivations);
  *mean = Tensor::Empty({rows}, DType::kF32, x.device(), MemoryCategory::kActivations);
  *rstd = Tensor::Empty({rows}, DType::kF32, x.device(), MemoryCategory::kActivations);
  const float* g = gamma.data<float>();
  const float* b = beta.data<float>();
  ParallelFor(rows, RowGrain(width), [&](int64_t begin, int64_t end) {
    std::vector<float> in(static_cast<size_t>(width)), out(static_cast<size_t>(width));
    for (int64_t r = begin; r < end; ++r) {
      LoadFloats(x, r * width, width, in.data());
      const RowStatistics stats = NormaliseStatistics(in.data(), width, eps);
      for (int64_t j = 0; j < width; ++j) out[j] = (in[j] - stats.mean) * stats.rstd * g[j] + b[j];
      StoreFloats(out.data(), r * width, width, y);
      mean->data<float>()[r] = stats.mean;
      rstd->data<float>()[r] = stats.rstd;
    }
  });
}

// With xhat = (x - mean) * rstd and g = dy * gamma:
//   dx = rstd * (g - mean_j(g) - xhat * mean_j(g * xhat)),  dgamma += dy * xhat,  dbeta += dy.
// dx is independent per row; the parameter gradients are sums over rows, so they are split by
// column instead (each column still sums its rows in order: the result is the serial one).
Tensor LayerNormBackward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                         const Tensor& rstd, Tensor* dgamma, Tensor* dbeta) {
  const int64_t width = gamma.numel();
  const int64_t rows = x.numel() / width;
  Tensor dx = Tensor::Empty(x.shape(), x.dtype(), x.device(), MemoryCategory::kActivations);
  ParallelFor(rows, RowGrain(width), [&](int64_t begin, int64_t end) {
    LayerNormInputGradRows(dy, x, gamma, mean, rstd, begin, end, &dx);
  });
  ParallelFor(width, ColumnGrain(rows), [&](int64_t begin, int64_t end) {
    LayerNormParamGradColumns(dy, x, mean, rstd, begin, end, dgamma, dbeta);
  });
  return dx;
}

}  // namespace xlmr::kernels::cpu
