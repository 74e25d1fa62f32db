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
#include "framework/ops/fused_attention.h"
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

// `values` [B,S,H] with the dimensions of every head (head_dim wide) reversed (an involution).
std::vector<float> ReverseHeadDims(std::vector<float> values, int64_t head_dim) {
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

// The [B,S] key mask with the keys of every sequence reversed.
Tensor ReverseKeysOfMask(const Tensor& mask) {
  const int64_t batch = mask.dim(0), seq = mask.dim(1);
  Tensor out = Tensor::Zeros(mask.shape(), DType::kI32);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < seq; ++s) {
      out.data<int32_t>()[b * seq + s] = mask.data<int32_t>()[b * seq + seq - 1 - s];
    }
  }
  return out;
}

// `in` with the dimensions of every head reversed in q, k, v and dO.
AttentionInputs WithHeadDimsReversed(const AttentionInputs& in, int64_t head_dim) {
  const auto flip = [&](const Tensor& t) { return Like(t, ReverseHeadDims(t.ToFloatVector(), head_dim)); };
  return {flip(in.q), flip(in.k), flip(in.v), in.key_mask, flip(in.d_context)};
}

// `in` with the keys (and values, and the mask) of every sequence reversed.
AttentionInputs WithKeysReversed(const AttentionInputs& in) {
  const int64_t seq = in.k.dim(1), hidden = in.k.dim(2);
  const auto flip = [&](const Tensor& t) { return Like(t, ReverseAxis(t.ToFloatVector(), seq, hidden)); };
  return {in.q, flip(in.k), flip(in.v), ReverseKeysOfMask(in.key_mask), in.d_context};
}

// `in` widened to f32 (exactly): the same values without the half-precision contract.
AttentionInputs Widened(const AttentionInputs& in) {
  const auto widen = [](const Tensor& t) { return Like(Tensor::Zeros(t.shape(), DType::kF32), t.ToFloatVector()); };
  return {widen(in.q), widen(in.k), widen(in.v), in.key_mask, widen(in.d_context)};
}

// `values` rounded once to `dtype`.
std::vector<float> RoundedTo(const std::vector<float>& values, DType dtype) {
  Tensor rounded = Tensor::Zeros({static_cast<int64_t>(values.size())}, dtype);
  rounded.CopyFromFloats(values);
  return rounded.ToFloatVector();
}

Outputs RunHeadDimsReversed(const AttentionCase& c, const AttentionInputs& in, float p) {
  const int64_t head_dim = c.hidden / c.heads;
  Outputs out = Run(c, WithHeadDimsReversed(in, head_dim), p);
  for (std::vector<float>* x : {&out.context, &out.dq, &out.dk, &out.dv}) *x = ReverseHeadDims(*x, head_dim);
  return out;
}

Outputs RunKeysReversed(const AttentionCase& c, const AttentionInputs& in) {
  Outputs out = Run(c, WithKeysReversed(in), 0.0f);
  // probs [B*heads*S rows, S keys]: reverse each row; dk, dv [B, S, H]: reverse the keys.
  out.probs = ReverseAxis(out.probs, c.seq, 1);
  out.dk = ReverseAxis(out.dk, c.seq, c.hidden);
  out.dv = ReverseAxis(out.dv, c.seq, c.hidden);
  return out;
}

// The inputs widened to f32 (exactly), run in f32, the outputs rounded once to `dtype`.
Outputs RunWithoutHalfRoundings(const AttentionCase& c, const AttentionInputs& in, float p,
                                DType dtype) {
  Outputs out = Run(c, Widened(in), p);
  for (std::vector<float>* x : {&out.context, &out.dq, &out.dk, &out.dv}) *x = RoundedTo(*x, dtype);
  return out;
}

// max |x - reference| / max |reference| and mean |x - reference| / max |reference|, as the GPU
// test measures them.
struct Error {
  double max = 0, mean = 0;
};

// `scale_floor`: the least scale the errors are measured against (fused dq and dk: dv's largest).
Error ErrorToLargest(const std::vector<float>& x, const std::vector<float>& reference,
                     double scale_floor = 0) {
  double largest = scale_floor, worst = 0, sum = 0;
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

// ---- Fused attention (tests/gpu/fused_attention_test.cc) ----

using testing::FusedAttentionCase;

// The logsumexp and the four [B,S,H] results of one fused forward and backward.
struct FusedOutputs {
  std::vector<float> logsumexp, context, dq, dk, dv;
};

FusedOutputs RunFused(const FusedAttentionCase& c, const AttentionInputs& in, float p) {
  const DropoutKey& key = testing::kFusedAttentionCaseKey;
  const ops::FusedAttentionOutput fwd = ops::FusedAttention(in.q, in.k, in.v, in.key_mask, c.heads, p, key);
  const ops::AttentionGrads grads = ops::FusedAttentionBackward(
      in.d_context, in.q, in.k, in.v, fwd.context, fwd.logsumexp, in.key_mask, c.heads, p, key);
  return {fwd.logsumexp.ToFloatVector(), fwd.context.ToFloatVector(), grads.dq.ToFloatVector(),
          grads.dk.ToFloatVector(), grads.dv.ToFloatVector()};
}

// Max and mean errors of the context, dq, dk, dv (dq and dk against dv's scale at least, as the
// GPU test measures them), and the logsumexp's max error, separately.
struct FusedError {
  Error results;
  double logsumexp = 0;
};

FusedError LargestError(const FusedOutputs& x, const FusedOutputs& reference) {
  double dv_scale = 0;
  for (float v : reference.dv) dv_scale = std::max(dv_scale, std::fabs(double{v}));
  FusedError largest;
  const Error errors[] = {ErrorToLargest(x.context, reference.context),
                          ErrorToLargest(x.dq, reference.dq, dv_scale),
                          ErrorToLargest(x.dk, reference.dk, dv_scale),
                          ErrorToLargest(x.dv, reference.dv)};
  for (const Error& e : errors) {
    largest.results.max = std::max(largest.results.max, e.max);
    largest.results.mean = std::max(largest.results.mean, e.mean);
  }
  largest.logsumexp = ErrorToLargest(x.logsumexp, reference.logsumexp).max;
  return largest;
}

FusedError Larger(const FusedError& a, const FusedError& b) {
  return {{std::max(a.results.max, b.results.max), std::max(a.results.mean, b.results.mean)},
          std::max(a.logsumexp, b.logsumexp)};
}

FusedOutputs RunFusedHeadDimsReversed(const FusedAttentionCase& c, const AttentionInputs& in, float p) {
  FusedOutputs out = RunFused(c, WithHeadDimsReversed(in, 64), p);
  for (std::vector<float>* x : {&out.context, &out.dq, &out.dk, &out.dv}) *x = ReverseHeadDims(*x, 64);
  return out;
}

FusedOutputs RunFusedWithoutHalfRoundings(const FusedAttentionCase& c, const AttentionInputs& in,
                                          float p, DType dtype) {
  FusedOutputs out = RunFused(c, Widened(in), p);
  for (std::vector<float>* x : {&out.context, &out.dq, &out.dk, &out.dv}) *x = RoundedTo(*x, dtype);
  return out;
}

// Only the head dimensions are reordered here: the fused contract fixes the key tiles and their
// order (each probability is rounded against the running max of the tiles so far), which a
// correct GPU kernel keeps, while reversing the keys changes that contract (measured: it moves
// f16 means by up to 3.2e-5, more than the missing roundings do). And a missing rounding is
// caught where it shows most: the GPU test fails if any case exceeds the bound, so the mean
// bound is held against the largest rounding effect over the cases (the smallest, 7.1e-6 at
// S = 64, is too close to the order effect to separate).
struct FusedEffects {
  FusedError order;
  double largest_rounding_mean = 0;
};

FusedEffects MeasureFused(DType dtype) {
  FusedEffects effects;
  for (const FusedAttentionCase& c : testing::FusedAttentionCases()) {
    const AttentionInputs in = testing::FusedAttentionCaseInputs(c, dtype);
    for (float p : {0.0f, 0.1f}) {
      const FusedOutputs base = RunFused(c, in, p);
      const FusedError order = LargestError(RunFusedHeadDimsReversed(c, in, p), base);
      const Error rounding = dtype == DType::kF32
                                 ? Error{}
                                 : LargestError(RunFusedWithoutHalfRoundings(c, in, p, dtype), base).results;
      std::printf("fused %s %s p=%.1f: head dims reversed: max %.3g mean %.3g lse %.3g; without roundings max "
                  "%.3g mean %.3g\n",
                  DTypeName(dtype), c.Name().c_str(), p, order.results.max, order.results.mean,
                  order.logsumexp, rounding.max, rounding.mean);
      effects.order = Larger(effects.order, order);
      effects.largest_rounding_mean = std::max(effects.largest_rounding_mean, rounding.mean);
    }
  }
  const testing::FusedAttentionTolerances t = testing::GpuFusedAttentionTolerances(dtype);
  std::printf("fused %s: order effect max %.3g mean %.3g, logsumexp %.3g; largest mean effect of "
              "leaving the roundings out %.3g; GPU tolerances max %.3g mean %.3g logsumexp %.3g\n",
              DTypeName(dtype), effects.order.results.max, effects.order.results.mean,
              effects.order.logsumexp, effects.largest_rounding_mean, t.max, t.mean, t.lse);
  return effects;
}

TEST(AttentionRoundingTest, FusedF32TolerancesAreThreeTimesTheOrderEffect) {
  const FusedEffects e = MeasureFused(DType::kF32);
  const testing::FusedAttentionTolerances t = testing::GpuFusedAttentionTolerances(DType::kF32);
  EXPECT_GT(e.order.results.max, 0.0) << "no reordering changed anything: the test lost its point";
  EXPECT_GE(t.max, 3 * e.order.results.max);
  EXPECT_GE(t.lse, 3 * e.order.logsumexp);
}

// f16 and bf16 (one CUDA template, each with its own bounds: bf16 keeps 3 fewer bits).
TEST(AttentionRoundingTest, FusedHalfTolerancesStandBetweenOrderAndMissingRoundings) {
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(DTypeName(dtype));
    const FusedEffects e = MeasureFused(dtype);
    const testing::FusedAttentionTolerances t = testing::GpuFusedAttentionTolerances(dtype);
    EXPECT_GT(e.order.results.max, 0.0) << "no reordering changed anything: the test lost its point";
    EXPECT_GE(t.max, 3 * e.order.results.max);
    EXPECT_GE(t.lse, 3 * e.order.logsumexp);
    EXPECT_GE(t.mean, 3 * e.order.results.mean);
    EXPECT_LE(t.mean, e.largest_rounding_mean / 3);
  }
}

}  // namespace
}  // namespace xlmr
