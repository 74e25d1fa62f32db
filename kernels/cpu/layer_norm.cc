#include "kernels/cpu/layer_norm.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/float_access.h"
#include "kernels/cpu/instruction_set.h"
#include "kernels/cpu/lane_sums.h"

namespace xlmr::kernels::cpu {
namespace {

// Each function below is built per instruction set (XLMR_INSTRUCTION_SET_CLONES: AVX-512, AVX2,
// plain x86-64) and its loops vectorise (BUILD: -fvect-cost-model=dynamic, -ffp-contract=off). Every clone performs the same
// roundings in the same order, so all three give the same bits:
// - the row sums run in double in the lane order of lane_sums.h (the loops below write the lanes
//   out so that the compiler sees them);
// - the column sums of the parameter gradients keep one running double per column, adding the
//   rows in order (vectorised across columns);
// - everything else is element by element.

struct RowStatistics {
  float mean;
  float rstd;
};

// Biased variance (divide by H) and eps inside the square root, as torch. The sums run in
// double so that the result is limited by fp32 storage, not by summation error. Writes
// out = (row - mean) * rstd * gamma + beta.
XLMR_INSTRUCTION_SET_CLONES
RowStatistics NormaliseRow(const float* row, const float* gamma, const float* beta, int64_t width,
                           float eps, float* out) {
  double lanes[kSumLanes] = {};
  int64_t j = 0;
  for (; j + kSumLanes <= width; j += kSumLanes) {
    for (int64_t lane = 0; lane < kSumLanes; ++lane) lanes[lane] += row[j + lane];
  }
  for (int64_t lane = 0; j < width; ++j, ++lane) lanes[lane] += row[j];
  const double mean = CombineLanes(lanes) / width;
  double squares[kSumLanes] = {};
  for (j = 0; j + kSumLanes <= width; j += kSumLanes) {
    for (int64_t lane = 0; lane < kSumLanes; ++lane) {
      const double deviation = row[j + lane] - mean;
      squares[lane] += deviation * deviation;
    }
  }
  for (int64_t lane = 0; j < width; ++j, ++lane) {
    const double deviation = row[j] - mean;
    squares[lane] += deviation * deviation;
  }
  const double variance = CombineLanes(squares) / width;
  const RowStatistics stats{static_cast<float>(mean),
                            static_cast<float>(1.0 / std::sqrt(variance + eps))};
  for (int64_t j = 0; j < width; ++j) {
    out[j] = (row[j] - stats.mean) * stats.rstd * gamma[j] + beta[j];
  }
  return stats;
}

// One row of dx = rstd * (g - mean_j(g) - xhat * mean_j(g * xhat)), g = dy * gamma,
// xhat = (x - mean) * rstd as the forward computed it. grad: scratch of width floats.
XLMR_INSTRUCTION_SET_CLONES
void InputGradRow(const float* x_row, const float* dy_row, const float* gamma, float row_mean,
                  float row_rstd, int64_t width, float* grad, float* out) {
  for (int64_t j = 0; j < width; ++j) grad[j] = dy_row[j] * gamma[j];
  double grad_lanes[kSumLanes] = {}, grad_xhat_lanes[kSumLanes] = {};
  int64_t j = 0;
  for (; j + kSumLanes <= width; j += kSumLanes) {
    for (int64_t lane = 0; lane < kSumLanes; ++lane) {
      const float xhat = (x_row[j + lane] - row_mean) * row_rstd;
      grad_lanes[lane] += grad[j + lane];
      grad_xhat_lanes[lane] += double{grad[j + lane]} * xhat;
    }
  }
  for (int64_t lane = 0; j < width; ++j, ++lane) {
    const float xhat = (x_row[j] - row_mean) * row_rstd;
    grad_lanes[lane] += grad[j];
    grad_xhat_lanes[lane] += double{grad[j]} * xhat;
  }
  const float grad_mean = static_cast<float>(CombineLanes(grad_lanes) / width);
  const float grad_xhat_mean = static_cast<float>(CombineLanes(grad_xhat_lanes) / width);
  for (j = 0; j < width; ++j) {
    const float xhat = (x_row[j] - row_mean) * row_rstd;
    out[j] = row_rstd * (grad[j] - grad_mean - xhat * grad_xhat_mean);
  }
}

// dx rows [begin, end).
void LayerNormInputGradRows(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                            const Tensor& mean, const Tensor& rstd, int64_t begin, int64_t end,
                            Tensor* dx) {
  const int64_t width = gamma.numel();
  std::vector<float> x_scratch(width), dy_scratch(width), grad(width), dx_row(width);
  for (int64_t r = begin; r < end; ++r) {
    const float* x_row = FloatsOf(x, r * width, width, x_scratch.data());
    const float* dy_row = FloatsOf(dy, r * width, width, dy_scratch.data());
    // f32: written in place; otherwise rounded once into dx.
    float* out = dx->dtype() == DType::kF32 ? dx->data<float>() + r * width : dx_row.data();
    InputGradRow(x_row, dy_row, gamma.data<float>(), mean.data<float>()[r], rstd.data<float>()[r],
                 width, grad.data(), out);
    if (dx->dtype() != DType::kF32) StoreFloats(dx_row.data(), r * width, width, dx);
  }
}

// dgamma_sum[j] += dy * xhat and dbeta_sum[j] += dy for one row's `columns` columns.
XLMR_INSTRUCTION_SET_CLONES
void AccumulateParamGradRow(const float* x_row, const float* dy_row, float row_mean,
                            float row_rstd, int64_t columns, double* dgamma_sum,
                            double* dbeta_sum) {
  for (int64_t j = 0; j < columns; ++j) {
    const float xhat = (x_row[j] - row_mean) * row_rstd;
    dgamma_sum[j] += double{dy_row[j]} * xhat;
    dbeta_sum[j] += dy_row[j];
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
    const float* x_row = FloatsOf(x, r * width + begin, columns, x_part.data());
    const float* dy_row = FloatsOf(dy, r * width + begin, columns, grad.data());
    AccumulateParamGradRow(x_row, dy_row, mean.data<float>()[r], rstd.data<float>()[r], columns,
                           dgamma_sum.data(), dbeta_sum.data());
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
      const float* row = FloatsOf(x, r * width, width, in.data());
      const bool f32_out = out_dtype == DType::kF32;
      float* y_row = f32_out ? y->data<float>() + r * width : out.data();
      const RowStatistics stats = NormaliseRow(row, g, b, width, eps, y_row);
      if (!f32_out) StoreFloats(out.data(), r * width, width, y);
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
