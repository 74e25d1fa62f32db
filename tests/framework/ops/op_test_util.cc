#include "tests/framework/ops/op_test_util.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "framework/tensor/half.h"

namespace xlmr::testing {

std::vector<float> RandomValues(int64_t count, uint32_t seed, float low, float high) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = distribution(generator);
  return values;
}

Tensor TensorFrom(const Shape& shape, DType dtype, const std::vector<float>& values) {
  Tensor t = Tensor::Zeros(shape, dtype);
  t.CopyFromFloats(values);
  return t;
}

std::vector<float> RoundedToHalf(const std::vector<float>& values) {
  std::vector<float> rounded(values.size());
  for (size_t i = 0; i < values.size(); ++i) rounded[i] = HalfToFloat(FloatToHalf(values[i]));
  return rounded;
}

std::vector<double> ToDoubles(const std::vector<float>& values) {
  return std::vector<double>(values.begin(), values.end());
}

double MaxNormalisedError(const std::vector<float>& actual, const std::vector<double>& expected) {
  if (actual.size() != expected.size()) return INFINITY;
  double max_error = 0.0, scale = 1e-30;
  for (size_t i = 0; i < actual.size(); ++i) {
    max_error = std::max(max_error, std::fabs(actual[i] - expected[i]));
    scale = std::max(scale, std::fabs(expected[i]));
  }
  return max_error / scale;
}

double Dot(const std::vector<double>& weights, const std::vector<double>& values) {
  double sum = 0.0;
  for (size_t i = 0; i < weights.size() && i < values.size(); ++i) sum += weights[i] * values[i];
  return sum;
}

std::vector<double> FiniteDifferenceGradient(
    const std::function<double(const std::vector<double>&)>& loss, std::vector<double> point,
    double step) {
  std::vector<double> gradient(point.size());
  for (size_t i = 0; i < point.size(); ++i) {
    const double saved = point[i];
    point[i] = saved + step;
    const double up = loss(point);
    point[i] = saved - step;
    const double down = loss(point);
    point[i] = saved;
    gradient[i] = (up - down) / (2.0 * step);
  }
  return gradient;
}

std::vector<uint16_t> HalfBits(const Tensor& t) {
  std::vector<uint16_t> bits(static_cast<size_t>(t.numel()));
  const Half* data = t.data<Half>();
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = data[i].bits;
  return bits;
}

}  // namespace xlmr::testing
