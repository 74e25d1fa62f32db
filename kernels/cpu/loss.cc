#include "kernels/cpu/loss.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "framework/core/check.h"
#include "kernels/common/cosent.h"
#include "kernels/common/label_smoothing.h"
#include "kernels/cpu/float_access.h"

namespace xlmr::kernels::cpu {
namespace {

// The label value that excludes a row (torch's default ignore_index).
constexpr int32_t kIgnoreIndex = -100;

// One row of logits as float, with its log-softmax normaliser: log_softmax(x)_j =
// (x_j - max) - log_sum, computed as torch does (max subtraction, sum of exps in fp32).
struct LogSoftmaxRow {
  std::vector<float> values;
  float max = 0.0f;
  float log_sum = 0.0f;

  float LogProb(int64_t j) const { return (values[j] - max) - log_sum; }

  // sum_j -log_softmax(x)_j, summed in double: label smoothing's uniform term times C.
  double NegativeLogProbSum() const {
    double total = 0.0;
    for (size_t j = 0; j < values.size(); ++j) total -= LogProb(static_cast<int64_t>(j));
    return total;
  }
};

LogSoftmaxRow LoadLogSoftmaxRow(const Tensor& logits, int64_t row) {
  const int64_t classes = logits.dim(1);
  LogSoftmaxRow out;
  out.values.resize(static_cast<size_t>(classes));
  LoadFloats(logits, row * classes, classes, out.values.data());
  out.max = *std::max_element(out.values.begin(), out.values.end());
  float sum = 0.0f;
  for (float x : out.values) sum += std::exp(x - out.max);
  out.log_sum = std::log(sum);
  return out;
}

// The label of `row`, or kIgnoreIndex; anything else outside [0, classes) is a bug upstream
// (the data layer validates labels against num_labels).
int32_t LabelOf(const Tensor& labels, int64_t row, int64_t classes) {
  const int32_t label = labels.data<int32_t>()[row];
  XLMR_CHECK(label == kIgnoreIndex || (label >= 0 && label < classes))
      << "label " << label << " of row " << row << " outside [0, " << classes << ") and not "
      << kIgnoreIndex;
  return label;
}

// Sum over all elements of loss(a_i, b_i) computed in fp32, accumulated in double.
template <typename Fn>
LossTotals SumElementLosses(const Tensor& a, const Tensor& b, Fn loss) {
  LossTotals totals;
  float in_a[kFloatChunk], in_b[kFloatChunk];
  ForEachChunk(a.numel(), [&](int64_t begin, int64_t count) {
    LoadFloats(a, begin, count, in_a);
    LoadFloats(b, begin, count, in_b);
    for (int64_t i = 0; i < count; ++i) totals.sum += loss(in_a[i], in_b[i]);
  });
  totals.count = a.numel();
  return totals;
}

}  // namespace

LossTotals CrossEntropyLossSum(const Tensor& logits, const Tensor& labels, float label_smoothing) {
  const int64_t rows = logits.dim(0), classes = logits.dim(1);
  LossTotals totals;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t label = LabelOf(labels, r, classes);
    if (label == kIgnoreIndex) continue;
    const LogSoftmaxRow row = LoadLogSoftmaxRow(logits, r);
    double loss = -row.LogProb(label);
    if (label_smoothing != 0.0f) {  // HF's LabelSmoother: nll and the uniform target, mixed
      loss = (1.0 - label_smoothing) * loss +
             label_smoothing * row.NegativeLogProbSum() / static_cast<double>(classes);
    }
    totals.sum += loss;
    ++totals.count;
  }
  return totals;
}

Tensor CrossEntropyBackward(const Tensor& logits, const Tensor& labels, float scale,
                            float label_smoothing) {
  const int64_t rows = logits.dim(0), classes = logits.dim(1);
  Tensor dlogits =
      Tensor::Zeros(logits.shape(), DType::kF32, Device::kCpu, MemoryCategory::kActivations);
  const SmoothedTargetWeights targets = SmoothedTargets(scale, label_smoothing, classes);
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t label = LabelOf(labels, r, classes);
    if (label == kIgnoreIndex) continue;
    const LogSoftmaxRow row = LoadLogSoftmaxRow(logits, r);
    float* out = dlogits.data<float>() + r * classes;
    // torch's log_softmax backward of the targets' gradient (kernels/common/label_smoothing.h).
    for (int64_t j = 0; j < classes; ++j) out[j] = scale * std::exp(row.LogProb(j)) - targets.uniform;
    out[label] -= targets.one_hot;
  }
  return dlogits;
}

LossTotals MseLossSum(const Tensor& predictions, const Tensor& targets) {
  return SumElementLosses(predictions, targets, [](float p, float t) {
    const float diff = p - t;
    return diff * diff;
  });
}

Tensor MseBackward(const Tensor& predictions, const Tensor& targets, float scale) {
  const float factor = 2.0f * scale;  // torch folds the 2 into the incoming gradient
  return MapElements(predictions, targets, DType::kF32,
                     [factor](float p, float t) { return factor * (p - t); });
}

LossTotals BceWithLogitsLossSum(const Tensor& logits, const Tensor& targets) {
  // The stable form: never exponentiates a positive number.
  return SumElementLosses(logits, targets, [](float x, float t) {
    return std::max(x, 0.0f) - x * t + std::log1p(std::exp(-std::fabs(x)));
  });
}

Tensor BceWithLogitsBackward(const Tensor& logits, const Tensor& targets, float scale) {
  return MapElements(logits, targets, DType::kF32, [scale](float x, float t) {
    const float sigmoid = 1.0f / (1.0f + std::exp(-x));
    return (sigmoid - t) * scale;
  });
}

LossTotals CosentLossSum(const Tensor& scores, const Tensor& labels) {
  const int64_t n = scores.numel();
  if (n == 0) return {};
  std::vector<double> row_sums(static_cast<size_t>(n));
  return {CosentStatsOf(scores.data<float>(), labels.data<float>(), n, row_sums.data()).Loss(), 1};
}

Tensor CosentBackward(const Tensor& scores, const Tensor& labels, float scale) {
  const int64_t n = scores.numel();
  Tensor dscores = Tensor::Empty({n}, DType::kF32, Device::kCpu, MemoryCategory::kActivations);
  const float* s = scores.data<float>();
  const float* y = labels.data<float>();
  std::vector<double> row_sums(static_cast<size_t>(n));
  const CosentStats stats = CosentStatsOf(s, y, n, row_sums.data());
  for (int64_t k = 0; k < n; ++k) dscores.data<float>()[k] = CosentScoreGradient(s, y, n, k, stats, scale);
  return dscores;
}

}  // namespace xlmr::kernels::cpu
