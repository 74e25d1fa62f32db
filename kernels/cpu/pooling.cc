#include "kernels/cpu/pooling.h"

#include <vector>

namespace xlmr::kernels::cpu {
namespace {

// The mean of the rows of x listed in `rows` (in that order): a float sum, one addition per row,
// then one division by the count (sentence-transformers' sum / count; 0 for no rows, as its
// clamp of the count to 1e-9 gives).
void MeanOfRows(const float* x, int64_t hidden, const std::vector<int64_t>& rows, float* out) {
  for (int64_t h = 0; h < hidden; ++h) out[h] = 0.0f;
  for (int64_t row : rows) {
    const float* source = x + row * hidden;
    for (int64_t h = 0; h < hidden; ++h) out[h] += source[h];
  }
  if (rows.empty()) return;
  const float count = static_cast<float>(rows.size());
  for (int64_t h = 0; h < hidden; ++h) out[h] /= count;
}

void SpreadMean(const float* dy, int64_t hidden, const std::vector<int64_t>& rows, float* dx) {
  const float count = static_cast<float>(rows.size());
  for (int64_t row : rows) {
    float* target = dx + row * hidden;
    for (int64_t h = 0; h < hidden; ++h) target[h] = dy[h] / count;
  }
}

// The rows of sequence b: its masked positions of a padded batch.
std::vector<int64_t> MaskedRows(const int32_t* mask, int64_t b, int64_t seq) {
  std::vector<int64_t> rows;
  for (int64_t s = 0; s < seq; ++s) {
    if (mask[b * seq + s] != 0) rows.push_back(b * seq + s);
  }
  return rows;
}

std::vector<int64_t> SegmentRows(const int32_t* cu_seqlens, int64_t b) {
  std::vector<int64_t> rows;
  for (int64_t row = cu_seqlens[b]; row < cu_seqlens[b + 1]; ++row) rows.push_back(row);
  return rows;
}

}  // namespace

Tensor MaskedMeanPool(const Tensor& x, const Tensor& mask) {
  const int64_t batch = x.dim(0), seq = x.dim(1), hidden = x.dim(2);
  Tensor y = Tensor::Empty({batch, hidden}, DType::kF32, Device::kCpu, MemoryCategory::kActivations);
  for (int64_t b = 0; b < batch; ++b) {
    MeanOfRows(x.data<float>(), hidden, MaskedRows(mask.data<int32_t>(), b, seq), y.data<float>() + b * hidden);
  }
  return y;
}

Tensor MaskedMeanPoolBackward(const Tensor& dy, const Tensor& mask) {
  const int64_t batch = mask.dim(0), seq = mask.dim(1), hidden = dy.dim(1);
  Tensor dx = Tensor::Zeros({batch, seq, hidden}, DType::kF32, Device::kCpu, MemoryCategory::kActivations);
  for (int64_t b = 0; b < batch; ++b) {
    SpreadMean(dy.data<float>() + b * hidden, hidden, MaskedRows(mask.data<int32_t>(), b, seq), dx.data<float>());
  }
  return dx;
}

Tensor SegmentMeanPool(const Tensor& x, const Tensor& cu_seqlens) {
  const int64_t batch = cu_seqlens.numel() - 1, hidden = x.dim(1);
  Tensor y = Tensor::Empty({batch, hidden}, DType::kF32, Device::kCpu, MemoryCategory::kActivations);
  for (int64_t b = 0; b < batch; ++b) {
    MeanOfRows(x.data<float>(), hidden, SegmentRows(cu_seqlens.data<int32_t>(), b), y.data<float>() + b * hidden);
  }
  return y;
}

Tensor SegmentMeanPoolBackward(const Tensor& dy, const Tensor& cu_seqlens, int64_t rows) {
  const int64_t batch = cu_seqlens.numel() - 1, hidden = dy.dim(1);
  Tensor dx = Tensor::Zeros({rows, hidden}, DType::kF32, Device::kCpu, MemoryCategory::kActivations);
  for (int64_t b = 0; b < batch; ++b) {
    SpreadMean(dy.data<float>() + b * hidden, hidden, SegmentRows(cu_seqlens.data<int32_t>(), b), dx.data<float>());
  }
  return dx;
}

}  // namespace xlmr::kernels::cpu
