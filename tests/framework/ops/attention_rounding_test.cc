// What the tolerances of tests/gpu/attention_test.cc (CUDA eager attention against the CPU
// backend, tests/testing/attention_cases.h) must stand between, measured on the CPU for the
// same problems, dtypes and dropout rates:
//  - order: how far the CPU's own result moves when only the order of its sums changes, which
//    is all that separates a correct GPU kernel from the CPU (cuBLASLt vs OpenBLAS, tree vs
//    serial reductions). Two reorderings that leave the function unchanged: the dimensions of
//    every head reversed in q, k, v and dO (every q.k and dO.v dot product sums in the other
//    order; the outputs are reversed back), and, without dropout (whose mask is keyed by the
//    key's position), the keys of every sequence reversed (softmax sums and every product over
//    keys in the other order; the probabilities and dk, dv reversed back).
//  - rounding: how far the result moves when the half-precision roundings of the contract
//    (scores, probabilities before P V, dP, dS) are left out: the same (already rounded) inputs
//    computed in f32 and the outputs rounded once to the dtype. That is the bug the f16 and
//    bf16 bounds exist to catch.
// Each output is measured as the GPU test measures it, by its largest error and by its mean
// error, both relative to the output's largest element (GpuAttentionTolerances). The test
// prints every figure and fails unless both bounds are at least 3x the largest order effect (a
// correct kernel passes with margin) and the mean bound is at most a third of the rounding
// effect in every case that has one (a kernel that drops the roundings fails).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "framework/ops/attention.h"
#include "gtest/gtest.h"
#include "tests/testing/attention_cases.h"

namespace xlmr {
namespace {

using testing::AttentionCase;
using testing::AttentionInputs;

// The five results of one forward and backward, as floats.
struct Outputs {
  std::vector<float> probs, context, dq, dk, dv;
};

Outputs Run(const AttentionCase& c, const AttentionInputs& in, float p) {
  const ops::AttentionOutput fwd =
      ops::Attention(in.q, in.k, in.v, in.key_mask, c.heads, p, testing::kAttentionCaseKey);
  const ops::AttentionGrads grads =
      ops::AttentionBackward(in.d_context, in.q, in.k, in.v, fwd.probs, in.key_mask, c.heads, p,
                             testing::kAttentionCaseKey);
  return {fwd.probs.ToFloatVector(), fwd.context.ToFloatVector(), grads.dq.ToFloatVector(),
          grads.dk.ToFloatVector(), grads.dv.ToFloatVector()};
}

// `values` [B,S,H] with the dimensions of every head reversed (an involution).
std::vector<float> ReverseHeadDims(std::vector<float> values, const AttentionCase& c) {
  const int64_t head_dim = c.hidden / c.heads;
  for (size_t at = 0; at < values.size(); at += static_cast<size_t>(head_dim)) {
    std::reverse(values.begin() + at, values.begin() + at + head_dim);
  }
  return values;
}

// `values` laid out as [outer, S, inner] with the S axis reversed (an involution).
std::vector<float> ReverseAxis(std::vector<float> values, int64_t seq, int64_t inner) {
  const int64_t outer = static_cast<int64_t>(values.size()) / (seq * inner);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t s = 0; s < seq / 2; ++s) {
      std::swap_ranges(values.begin() + (o * seq + s) * inner,
                       values.begin() + (o * seq + s + 1) * inner,
                       values.begin() + (o * seq + seq - 1 - s) * inner);
    }
  }
  return values;
}

Tensor Like(const Tensor& t, const std::vector<float>& values) {
  Tensor out = Tensor::Zeros(t.shape(), t.dtype());
  out.CopyFromFloats(values);  // exact: the values came from a tensor of this dtype
  return out;
}

Tensor ReverseKeysOfMask(const Tensor& mask, const AttentionCase& c) {
  Tensor out = Tensor::Zeros(mask.shape(), DType::kI32);
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t s = 0; s < c.seq; ++s) {
      out.data<int32_t>()[b * c.seq + s] = mask.data<int32_t>()[b * c.seq + c.seq - 1 - s];
    }
  }
  return out;
}

Outputs RunHeadDimsReversed(const AttentionCase& c, const AttentionInputs& in, float p) {
  const auto flip = [&](const Tensor& t) { return Like(t, ReverseHeadDims(t.ToFloatVector(), c)); };
  Outputs out = Run(c, {flip(in.q), flip(in.k), flip(in.v), in.key_mask, flip(in.d_context)}, p);
  for (std::vector<float>* x : {&out.context, &out.dq, &out.dk, &out.dv}) *x = ReverseHeadDims(*x, c);
  return out;
}

Outputs RunKeysReversed(const AttentionCase& c, const AttentionInputs& in) {
  const auto flip = [&](const Tensor& t) { return Like(t, ReverseAxis(t.ToFloatVector(), c.seq, c.hidden)); };
  Outputs out = Run(c, {in.q, flip(in.k), flip(in.v), ReverseKeysOfMask(in.key_mask, c), in.d_context}, 0.0f);
  // probs [B*heads*S rows, S keys]: reverse each row; dk, dv [B, S, H]: reverse the keys.
  out.probs = ReverseAxis(out.probs, c.seq, 1);
  out.dk = ReverseAxis(out.dk, c.seq, c.hidden);
  out.dv = ReverseAxis(out.dv, c.seq, c.hidden);
  return out;
}

// The inputs widened to f32 (exactly), run in f32, the outputs rounded once to `dtype`.
Outputs RunWithoutHalfRoundings(const AttentionCase& c, const AttentionInputs& in, float p,
                                DType dtype) {
  const auto widen = [](const Tensor& t) { return Like(Tensor::Zeros(t.shape(), DType::kF32), t.ToFloatVector()); };
  Outputs out = Run(c, {widen(in.q), widen(in.k), widen(in.v), in.key_mask, widen(in.d_context)}, p);
  for (std::vector<float>* x : {&out.context, &out.dq, &out.dk, &out.dv}) {
    Tensor rounded = Tensor::Zeros({static_cast<int64_t>(x->size())}, dtype);
    rounded.CopyFromFloats(*x);
    *x = rounded.ToFloatVector();
  }
  return out;
}

// max |x - reference| / max |reference| and mean |x - reference| / max |reference|, as the GPU
// test measures them.
struct Error {
  double max = 0, mean = 0;
};

Error ErrorToLargest(const std::vector<float>& x, const std::vector<float>& reference) {
  double largest = 0, worst = 0, sum = 0;
  for (size_t i = 0; i < reference.size(); ++i) {
    const double error = std::fabs(double{x[i]} - reference[i]);
    largest = std::max(largest, std::fabs(double{reference[i]}));
    worst = std::max(worst, error);
    sum += error;
  }
  if (largest == 0 || reference.empty()) return {};
  return {worst / largest, sum / static_cast<double>(reference.size()) / largest};
}

// The largest max and the largest mean over the five outputs.
Error LargestError(const Outputs& x, const Outputs& reference) {
  Error largest;
  for (const auto member : {&Outputs::probs, &Outputs::context, &Outputs::dq, &Outputs::dk, &Outputs::dv}) {
    const Error e = ErrorToLargest(x.*member, reference.*member);
    largest.max = std::max(largest.max, e.max);
    largest.mean = std::max(largest.mean, e.mean);
  }
  return largest;
}

struct Effects {
  Error order;                      // largest over the cases
  double smallest_rounding_mean = 1;  // over the cases that have roundings (else 1)
};

Effects Measure(DType dtype) {
  Effects effects;
  for (const AttentionCase& c : testing::AttentionCases()) {
    const AttentionInputs in = testing::AttentionCaseInputs(c, dtype);
    for (float p : {0.0f, 0.1f}) {
      const Outputs base = Run(c, in, p);
      Error order = LargestError(RunHeadDimsReversed(c, in, p), base);
      if (p == 0.0f) {
        const Error keys = LargestError(RunKeysReversed(c, in), base);
        order = {std::max(order.max, keys.max), std::max(order.mean, keys.mean)};
      }
      const Error rounding =
          dtype == DType::kF32 ? Error{} : LargestError(RunWithoutHalfRoundings(c, in, p, dtype), base);
      std::printf("%s %s p=%.1f: order max %.3g mean %.3g; without roundings max %.3g mean %.3g\n",
                  DTypeName(dtype), c.Name().c_str(), p, order.max, order.mean, rounding.max,
                  rounding.mean);
      effects.order = {std::max(effects.order.max, order.max), std::max(effects.order.mean, order.mean)};
      // S = 1 without dropout has no rounding to leave out (P = 1, context = v exactly).
      if (rounding.mean > 0) {
        effects.smallest_rounding_mean = std::min(effects.smallest_rounding_mean, rounding.mean);
      }
    }
  }
  const testing::AttentionTolerances t = testing::GpuAttentionTolerances(dtype);
  std::printf("%s: order effect max %.3g mean %.3g; smallest mean effect of leaving the roundings "
              "out %.3g; GPU tolerances max %.3g mean %.3g\n",
              DTypeName(dtype), effects.order.max, effects.order.mean,
              effects.smallest_rounding_mean, t.max, t.mean);
  return effects;
}

TEST(AttentionRoundingTest, F32ToleranceIsThreeTimesTheOrderEffect) {
  const Effects e = Measure(DType::kF32);
  EXPECT_GT(e.order.max, 0.0) << "no reordering changed anything: the test lost its point";
  EXPECT_GE(testing::GpuAttentionTolerances(DType::kF32).max, 3 * e.order.max);
}

// Both bounds at least 3x what reordering does; the mean bound at most a third of what leaving
// the roundings out does, in every case where that changes anything.
TEST(AttentionRoundingTest, HalfTolerancesStandBetweenOrderAndMissingRoundings) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    const Effects e = Measure(dtype);
    const testing::AttentionTolerances t = testing::GpuAttentionTolerances(dtype);
    EXPECT_GT(e.order.max, 0.0) << DTypeName(dtype) << ": no reordering changed anything";
    EXPECT_GE(t.max, 3 * e.order.max) << DTypeName(dtype);
    EXPECT_GE(t.mean, 3 * e.order.mean) << DTypeName(dtype);
    EXPECT_LE(t.mean, e.smallest_rounding_mean / 3) << DTypeName(dtype);
  }
}

}  // namespace
}  // namespace xlmr
