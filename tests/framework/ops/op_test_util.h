// Helpers shared by the op tests: deterministic random inputs, tensors from values, the
// max-abs-normalised error, and central finite differences of a double-precision reference.
//
// The gradient-check recipe every op test follows:
//   1. write the op's forward in double in the test (a few lines);
//   2. compare the op's fp32 forward with it (MaxNormalisedError);
//   3. take loss(inputs) = sum_i upstream_i * reference(inputs)_i and compare the op's backward,
//      fed dy = upstream, with FiniteDifferenceGradient(loss, input).
#ifndef XLMR_TESTS_FRAMEWORK_OPS_OP_TEST_UTIL_H_
#define XLMR_TESTS_FRAMEWORK_OPS_OP_TEST_UTIL_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "framework/tensor/tensor.h"

namespace xlmr::testing {

// `count` values uniform in [low, high), the same for the same seed.
std::vector<float> RandomValues(int64_t count, uint32_t seed, float low = -1.0f, float high = 1.0f);

// A new CPU tensor of `shape` and `dtype` holding `values` (rounded to the dtype).
Tensor TensorFrom(const Shape& shape, DType dtype, const std::vector<float>& values);

// `values` after a round trip through fp16: what an fp16 tensor of them holds.
std::vector<float> RoundedToHalf(const std::vector<float>& values);

std::vector<double> ToDoubles(const std::vector<float>& values);

// max_i |actual_i - expected_i| / max(max_i |expected_i|, 1e-30): an error relative to the
// scale of the whole result, so that near-zero entries do not dominate.
double MaxNormalisedError(const std::vector<float>& actual, const std::vector<double>& expected);

// sum_i weights_i * values_i: turns a vector-valued reference into a scalar loss whose
// gradient with respect to the reference's output is `weights` (the upstream dy).
double Dot(const std::vector<double>& weights, const std::vector<double>& values);

// d loss / d point by central differences (loss(p + h e_i) - loss(p - h e_i)) / 2h in double.
// With h = 1e-6 the truncation error (~h^2) and the cancellation error (~1e-16 / h) are both
// far below the 1e-4 tolerance the tests apply to the fp32 backward.
std::vector<double> FiniteDifferenceGradient(
    const std::function<double(const std::vector<double>&)>& loss, std::vector<double> point,
    double step = 1e-6);

// The fp16 bit patterns of an f16 tensor, for bit-exact comparisons.
std::vector<uint16_t> HalfBits(const Tensor& t);

}  // namespace xlmr::testing

#endif  // XLMR_TESTS_FRAMEWORK_OPS_OP_TEST_UTIL_H_
