#include "kernels/cpu/linear.h"


#include <algorithm>
#include <vector>

#include "kernels/cpu/float_access.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/instruction_set.h"

namespace xlmr::kernels::cpu {
namespace {

// Shape of `x` with its last dimension replaced by `last`.
Shape WithLastDim(const Shape& x, int64_t last) {
  Shape shape = x;
  shape.back() = last;
  return shape;
}

// bias: f32, or f16|bf16 widened exactly to f32 first.
void BroadcastBiasRows(const Tensor& bias, int64_t rows, float* y) {
  const int64_t width = bias.numel();
  const bool widen = bias.dtype() != DType::kF32;
  const std::vector<float> widened = widen ? bias.ToFloatVector() : std::vector<float>();
  const float* b = widen ? widened.data() : bias.data<float>();
  ParallelFor(rows, RowGrain(width), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) std::copy(b, b + width, y + r * width);
  });
}

// sums[j] = sum of column j of dy [rows, width] for j < columns (<= kColumnBlock), over the
// rows in order, in double. Vectorised across the columns (each column's additions keep their
// order), built per instruction set; every clone rounds the same.
XLMR_INSTRUCTION_SET_CLONES
void SumColumnBlock(const float* dy, int64_t rows, int64_t width, int64_t columns, double* sums) {
  double running[kColumnBlock] = {};
  if (columns == kColumnBlock) {  // a constant trip count: the whole row of the block at once
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = dy + r * width;
      for (int64_t j = 0; j < kColumnBlock; ++j) running[j] += row[j];
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      const float* row = dy + r * width;
      for (int64_t j = 0; j < columns; ++j) running[j] += row[j];
    }
  }
  std::copy(running, running + columns, sums);
}

// dbias += column sums of dy [rows, width]; summed in double so the reference stays accurate
// for long batches, then added once in fp32. Split across threads by column: every column
// still sums its rows in order.
void AccumulateColumnSums(const float* dy, int64_t rows, int64_t width, Tensor* dbias) {
  float* out = dbias->data<float>();
  ParallelFor(width, ColumnGrain(rows), [&](int64_t begin, int64_t end) {
    double sums[kColumnBlock];
    for (int64_t first = begin; first < end; first += kColumnBlock) {
      const int64_t columns = std::min(kColumnBlock, end - first);
      SumColumnBlock(dy + first, rows, width, columns, sums);
      for (int64_t j = 0; j < columns; ++j) out[first + j] += static_cast<float>(sums[j]);
    }
  });
}

}  // namespace

Tensor LinearForward(const Tensor& x, const Tensor& weight, const Tensor& bias, DType out_dtype) {
  const int64_t in = weight.dim(1);
  const int64_t out = weight.dim(0);
  const int64_t rows = x.numel() / in;  // in >= 1 (ops::Linear checks)
  // Written whole: by the GEMM (beta 0), or by the bias and then the GEMM (beta 1).
  Tensor y32 = F32Output(WithLastDim(x.shape(), out), out_dtype);
  const bool has_bias = bias.defined();
  if (has_bias) BroadcastBiasRows(bias, rows, y32.data<float>());
  if (rows > 0 && out > 0) {
    const Tensor x32 = AsF32(x);
    const Tensor w32 = AsF32(weight);
    // y[rows, out] = 1 * x[rows, in] * w[out, in]^T + beta * y: beta 1 adds the broadcast bias,
    // beta 0 writes y without reading it.
    Sgemm(CblasNoTrans, CblasTrans, rows, out, in, 1.0f, x32.data<float>(), in, w32.data<float>(), in,
          has_bias ? 1.0f : 0.0f, y32.data<float>(), out);
  }
  return RoundToDType(y32, out_dtype);
}

Tensor LinearBackward(const Tensor& dy, const Tensor& x, const Tensor& weight, Tensor* dweight,
                      Tensor* dbias, DType dx_dtype) {
  const int64_t in = weight.dim(1);
  const int64_t out = weight.dim(0);
  const int64_t rows = x.numel() / in;  // in >= 1 (ops::LinearBackward checks)
  const Tensor dy32 = AsF32(dy);
  // The dx GEMM (beta 0) writes every element, except with out == 0: then it is skipped, and
  // dx, a sum over no terms, must be zeros (as on the GPU).
  Tensor dx32 = out > 0 ? F32Output(x.shape(), dx_dtype) : F32Result(x.shape(), dx_dtype);
  if (rows > 0 && out > 0) {
    const Tensor x32 = AsF32(x);
    const Tensor w32 = AsF32(weight);
    // dx[rows, in] = dy[rows, out] * w[out, in].
    Sgemm(CblasNoTrans, CblasNoTrans, rows, in, out, 1.0f, dy32.data<float>(), out, w32.data<float>(),
          in, 0.0f, dx32.data<float>(), in);
    // dweight[out, in] += dy[rows, out]^T * x[rows, in].
    Sgemm(CblasTrans, CblasNoTrans, out, in, rows, 1.0f, dy32.data<float>(), out, x32.data<float>(),
          in, 1.0f, dweight->data<float>(), in);
  }
  if (dbias != nullptr) AccumulateColumnSums(dy32.data<float>(), rows, out, dbias);
  return RoundToDType(dx32, dx_dtype);
}

}  // namespace xlmr::kernels::cpu
