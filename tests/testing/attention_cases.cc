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

// A CPU tensor of `shape` drawn from `distribution` (seeded mt19937), rounded once to `dtype`,
// so that both backends see the same values.
template <typename Distribution>
Tensor RandomCpu(const Shape& shape, DType dtype, uint32_t seed, Distribution distribution) {
  std::mt19937 rng(seed);
  std::vector<float> values(static_cast<size_t>(NumElements(shape)));
  for (float& v : values) v = distribution(rng);
  Tensor t = Tensor::Zeros(shape, dtype);
  t.CopyFromFloats(values);
  return t;
}

Tensor UniformCpu(const Shape& shape, DType dtype, uint32_t seed) {
  return RandomCpu(shape, dtype, seed, std::uniform_real_distribution<float>(-2.0f, 2.0f));
}

Tensor NormalCpu(const Shape& shape, DType dtype, uint32_t seed) {
  return RandomCpu(shape, dtype, seed, std::normal_distribution<float>());
}

}  // namespace

AttentionInputs AttentionCaseInputs(const AttentionCase& c, DType dtype) {
  const Shape shape = {c.batch, c.seq, c.hidden};
  return {UniformCpu(shape, dtype, 1), UniformCpu(shape, dtype, 2), UniformCpu(shape, dtype, 3),
          AttentionCaseKeyMask(c), UniformCpu(shape, dtype, 4)};
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

bool FusedAttentionCase::IsReal(int64_t b, int64_t j) const {
  return left_padded ? j >= seq - lengths[b] : j < lengths[b];
}

std::string FusedAttentionCase::Name() const {
  std::ostringstream name;
  name << "B=" << batch << " S=" << seq << " heads=" << heads << " lengths";
  for (int64_t length : lengths) name << " " << length;
  if (left_padded) name << " left-padded";
  return name.str();
}

const std::vector<FusedAttentionCase>& FusedAttentionCases() {
  static const std::vector<FusedAttentionCase> cases = {
      {2, 1, 2, {1, 1}},
      {4, 64, 2, {64, 1, 33, 64}},   // exactly one tile; a one-token sequence
      {3, 129, 3, {129, 70, 0}},     // partial last tile; a sequence without real tokens
      {2, 130, 2, {60, 130}, true},  // left padding: row 0's first key tile all padding
      {2, 512, 12, {512, 300}},      // XLM-R base: 12 heads of 64
      {2, 1030, 2, {1030, 1000}},    // 17 tiles, the last of 6 keys
  };
  return cases;
}

Tensor FusedAttentionCaseKeyMask(const FusedAttentionCase& c) {
  Tensor mask = Tensor::Zeros({c.batch, c.seq}, DType::kI32);
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t j = 0; j < c.seq; ++j) mask.data<int32_t>()[b * c.seq + j] = c.IsReal(b, j);
  }
  return mask;
}

AttentionInputs FusedAttentionCaseInputs(const FusedAttentionCase& c, DType dtype) {
  const Shape shape = {c.batch, c.seq, c.hidden()};
  return {NormalCpu(shape, dtype, 11), NormalCpu(shape, dtype, 12), NormalCpu(shape, dtype, 13),
          FusedAttentionCaseKeyMask(c), NormalCpu(shape, dtype, 14)};
}

// Measured on the CPU (attention_rounding_test.cc), largest over the cases: the head dimensions
// reordered move f32 results by 1.5e-6 (max) and the logsumexp by 1.8e-7, f16 results by
// 4.2e-4 (max) and 1.6e-6 (mean); leaving f16's roundings out moves the mean by up to 5.3e-5.
// Bounds: max 6x (f32) and 4.8x (f16) the order effect, logsumexp 11x, f16 mean 3.8x above the
// order effect and 8.8x below the rounding effect. (Before: argued 1e-5 / 5e-5 for f32 context
// / gradients, 2e-3 / 5e-3 for f16.)
FusedAttentionTolerances GpuFusedAttentionTolerances(DType dtype) {
  // bf16 (measured by attention_rounding_test on the CPU: order effect max 3.0e-3, mean 1.1e-6;
  // leaving the bf16 roundings out moves the mean by up to 3.2e-4): max 5x the order effect, the
  // mean bound near the geometric middle of the two, as f16's.
  if (dtype == DType::kBF16) return FusedAttentionTolerances{1.5e-2, 2e-6, 2e-5};
  return dtype == DType::kF16 ? FusedAttentionTolerances{2e-3, 2e-6, 6e-6}
                              : FusedAttentionTolerances{1e-5, 2e-6, 0.0};
}

int64_t VarlenAttentionCase::tokens() const {
  int64_t total = 0;
  for (int64_t length : lengths) total += length;
  return total;
}

int64_t VarlenAttentionCase::max_length() const {
  return lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
}

std::string VarlenAttentionCase::Name() const {
  std::ostringstream name;
  name << "B=" << lengths.size() << " T=" << tokens() << " heads=" << heads << " D=" << head_dim
       << " stride=" << dropout_stride << " lengths";
  for (size_t b = 0; b < lengths.size() && b < 12; ++b) name << " " << lengths[b];
  if (lengths.size() > 12) name << " ...";
  return name.str();
}

namespace {

// `count` lengths uniform in [1, longest] (seeded), the first 1 and the second `longest`.
std::vector<int64_t> ManyLengths(int count, int64_t longest, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> length(1, longest);
  std::vector<int64_t> lengths = {1, longest};
  while (static_cast<int>(lengths.size()) < count) lengths.push_back(length(rng));
  return lengths;
}

}  // namespace

const std::vector<VarlenAttentionCase>& VarlenAttentionCases() {
  static const std::vector<VarlenAttentionCase> cases = {
      {{1, 1030, 63, 64, 65, 129, 2}, 2, 64, 1040},  // mixed, 1 and the longest
      {{200}, 3, 64, 256},                           // one sequence only
      {ManyLengths(64, 96, 5), 2, 64, 128},          // many sequences
      {{512, 300, 1, 77}, 12, 64, 512},              // XLM-R base heads, stride = S_max
      {{0, 5, 0, 64}, 2, 64, 64},                    // empty sequences: their CTAs leave at once
  };
  return cases;
}

Tensor VarlenCuSeqlens(const VarlenAttentionCase& c) {
  Tensor cu = Tensor::Zeros({static_cast<int64_t>(c.lengths.size()) + 1}, DType::kI32);
  int32_t* data = cu.data<int32_t>();
  for (size_t b = 0; b < c.lengths.size(); ++b) {
    data[b + 1] = data[b] + static_cast<int32_t>(c.lengths[b]);
  }
  return cu;
}

AttentionInputs VarlenAttentionCaseInputs(const VarlenAttentionCase& c, DType dtype) {
  const Shape shape = {c.tokens(), c.hidden()};
  AttentionInputs in{NormalCpu(shape, dtype, 21), NormalCpu(shape, dtype, 22),
                     NormalCpu(shape, dtype, 23), Tensor(), NormalCpu(shape, dtype, 24)};
  in.cu_seqlens = VarlenCuSeqlens(c);
  return in;
}

}  // namespace xlmr::testing
