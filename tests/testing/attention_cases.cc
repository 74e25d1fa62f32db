#include "tests/testing/attention_cases.h"

#include <algorithm>
#include <random>
#include <sstream>

namespace xlmr::testing {

std::string AttentionCase::Name() const {
  std::ostringstream name;
  name << "B=" << batch << " S=" << seq << " H=" << hidden << " heads=" << heads
       << (padding ? " padded" : "");
  return name.str();
}

const std::vector<AttentionCase>& AttentionCases() {
  static const std::vector<AttentionCase> cases = {
      {2, 7, 24, 3, true},
      {4, 128, 768, 12, true},
      {3, 1, 16, 2, false},
      {1, 130, 40, 5, false},
      {3, 4, 24, 3, true},  // keys 4, 2, 0
      {2, 1030, 16, 2, true},
  };
  return cases;
}

Tensor AttentionCaseKeyMask(const AttentionCase& c) {
  Tensor mask = Tensor::Zeros({c.batch, c.seq}, DType::kI32);
  for (int64_t b = 0; b < c.batch; ++b) {
    const int64_t real = c.padding ? std::max<int64_t>(0, c.seq - 2 * b) : c.seq;
    for (int64_t j = 0; j < real; ++j) mask.data<int32_t>()[b * c.seq + j] = 1;
  }
  return mask;
}

namespace {

Tensor RandomCpu(const Shape& shape, DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> values(static_cast<size_t>(NumElements(shape)));
  for (float& v : values) v = uniform(rng);
  Tensor t = Tensor::Zeros(shape, dtype);
  t.CopyFromFloats(values);
  return t;
}

}  // namespace

AttentionInputs AttentionCaseInputs(const AttentionCase& c, DType dtype) {
  const Shape shape = {c.batch, c.seq, c.hidden};
  return {RandomCpu(shape, dtype, 1), RandomCpu(shape, dtype, 2), RandomCpu(shape, dtype, 3),
          AttentionCaseKeyMask(c), RandomCpu(shape, dtype, 4)};
}

// Measured on the CPU (attention_rounding_test.cc), largest over the cases and outputs: a change
// of summation order moves f32 results by 1.5e-6 (max), f16 by 7.8e-4 (max) and 1.1e-6 (mean),
// bf16 by 3.3e-3 and 1.1e-6; leaving the half roundings out moves, in every case that has
// them, some output's mean by at least 7.5e-5 (f16) and 5.3e-4 (bf16). Bounds: max 3-7x the
// order effect; mean 4.7x (f16) and 18x (bf16) above it and 15x and 26x below the rounding
// effect (room for the GPU's expf, 1-2 ulps from glibc's, to flip more roundings).
AttentionTolerances GpuAttentionTolerances(DType dtype) {
  switch (dtype) {
    case DType::kF16: return {2.5e-3, 5e-6};
    case DType::kBF16: return {1e-2, 2e-5};
    default: return {1e-5, 0.0};
  }
}

}  // namespace xlmr::testing
