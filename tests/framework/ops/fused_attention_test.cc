#include "framework/ops/fused_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <vector>

#include "framework/ops/attention.h"
#include "framework/random/philox.h"
#include "framework/tensor/half.h"
#include "gtest/gtest.h"
#include "tests/framework/ops/attention_problem.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using testing::Dot;
using testing::FiniteDifferenceGradient;
using testing::MaxNormalisedError;
using testing::RandomValues;
using testing::TensorFrom;
using testing::ToDoubles;

using Problem = testing::AttentionProblem;

Tensor KeyMask(const Problem& pr) { return pr.KeyMask(); }

// Attention written out plainly in double: softmax(q k^T / sqrt(D) + bias) with dropout, times
// v. The exact function both fused and eager attention approximate.
struct DoubleReference {
  std::vector<double> context, logsumexp;
};

DoubleReference RunDouble(const Problem& pr, const std::vector<double>& q,
                          const std::vector<double>& k, const std::vector<double>& v) {
  DoubleReference out{std::vector<double>(pr.elements()),
                      std::vector<double>(pr.batch * pr.heads * pr.seq)};
  const int64_t S = pr.seq, D = pr.head_dim();
  const double scale = 1.0 / std::sqrt(double(D));
  const double keep_scale = 1.0 / (1.0 - double(pr.dropout_p));
  for (int64_t b = 0; b < pr.batch; ++b) {
    for (int64_t h = 0; h < pr.heads; ++h) {
      for (int64_t i = 0; i < S; ++i) {
        std::vector<double> row(S);
        for (int64_t j = 0; j < S; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < D; ++c) dot += q[pr.X(b, i, h, c)] * k[pr.X(b, j, h, c)];
          row[j] = dot * scale + (pr.IsReal(b, j) ? 0.0 : -3.4028234663852886e38);
        }
        const double row_max = *std::max_element(row.begin(), row.end());
        double sum = 0;
        for (double& x : row) sum += (x = std::exp(x - row_max));
        out.logsumexp[pr.Row(b, h, i)] = row_max + std::log(sum);
        for (int64_t c = 0; c < D; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < S; ++j) {
            const int64_t index = pr.Row(b, h, i) * S + j;
            const bool kept = pr.dropout_p == 0.0f || DropoutUniform(pr.key, index) >= pr.dropout_p;
            if (kept) acc += row[j] / sum * keep_scale * v[pr.X(b, j, h, c)];
          }
          out.context[pr.X(b, i, h, c)] = acc;
        }
      }
    }
  }
  return out;
}

struct Inputs {
  std::vector<float> q, k, v, d_context;
};

Inputs RandomInputs(const Problem& pr, uint32_t seed) {
  return {RandomValues(pr.elements(), seed, -2.0f, 2.0f),
          RandomValues(pr.elements(), seed + 1, -2.0f, 2.0f), RandomValues(pr.elements(), seed + 2),
          RandomValues(pr.elements(), seed + 3)};
}

struct FusedRun {
  ops::FusedAttentionOutput out;
  ops::AttentionGrads grads;
};

FusedRun RunFused(const Problem& pr, DType dtype, const Inputs& in) {
  const Tensor q = TensorFrom(pr.shape(), dtype, in.q), k = TensorFrom(pr.shape(), dtype, in.k),
               v = TensorFrom(pr.shape(), dtype, in.v);
  const Tensor mask = KeyMask(pr);
  FusedRun run;
  run.out = ops::FusedAttention(q, k, v, mask, pr.heads, pr.dropout_p, pr.key);
  run.grads = ops::FusedAttentionBackward(TensorFrom(pr.shape(), dtype, in.d_context), q, k, v,
                                          run.out.context, run.out.logsumexp, mask, pr.heads,
                                          pr.dropout_p, pr.key);
  return run;
}

struct EagerRun {
  ops::AttentionOutput out;
  ops::AttentionGrads grads;
};

EagerRun RunEager(const Problem& pr, DType dtype, const Inputs& in) {
  const Tensor q = TensorFrom(pr.shape(), dtype, in.q), k = TensorFrom(pr.shape(), dtype, in.k),
               v = TensorFrom(pr.shape(), dtype, in.v);
  const Tensor mask = KeyMask(pr);
  EagerRun run;
  run.out = ops::Attention(q, k, v, mask, pr.heads, pr.dropout_p, pr.key);
  run.grads = ops::AttentionBackward(TensorFrom(pr.shape(), dtype, in.d_context), q, k, v,
                                     run.out.probs, mask, pr.heads, pr.dropout_p, pr.key);
  return run;
}

std::vector<float> Concat(const ops::AttentionGrads& g) {
  std::vector<float> all = g.dq.ToFloatVector();
  for (const Tensor* t : {&g.dk, &g.dv}) {
    const std::vector<float> values = t->ToFloatVector();
    all.insert(all.end(), values.begin(), values.end());
  }
  return all;
}

class FusedAttentionGradientTest : public ::testing::TestWithParam<Problem> {};

// Against the double reference and double central differences of it. Tolerances as for eager
// attention (attention_test.cc): fp32 sums and softmax err by ~1e-7 relative, so 1e-5 on the
// context (normalised) and 1e-5 on dq, dk, dv together (normalised: for S = 1 dq and dk are
// exactly zero) leave a wide margin, while a wrong index, scale, mask or tile rescale gives
// errors of order 0.1. logsumexp: 1e-6 relative (an fp32 max plus log of an fp32 sum).
// The shapes cross the 64-key tile: S = 65 and 130 have a short last tile, so the online
// softmax rescales the accumulator at least once per row.
TEST_P(FusedAttentionGradientTest, MatchesDoubleReferenceAndFiniteDifferences) {
  const Problem& pr = GetParam();
  const Inputs in = RandomInputs(pr, 11);
  const FusedRun run = RunFused(pr, DType::kF32, in);
  const std::vector<double> qd = ToDoubles(in.q), kd = ToDoubles(in.k), vd = ToDoubles(in.v);
  const DoubleReference expected = RunDouble(pr, qd, kd, vd);
  EXPECT_LE(MaxNormalisedError(run.out.context.ToFloatVector(), expected.context), 1e-5);
  const std::vector<float> lse = run.out.logsumexp.ToFloatVector();
  ASSERT_EQ(lse.size(), expected.logsumexp.size());
  for (size_t i = 0; i < lse.size(); ++i) {
    EXPECT_NEAR(lse[i], expected.logsumexp[i], 1e-6 * std::max(1.0, std::fabs(expected.logsumexp[i])))
        << "row " << i;
  }

  const std::vector<double> dy = ToDoubles(in.d_context);
  std::vector<double> fd = FiniteDifferenceGradient(
      [&](const std::vector<double>& p) { return Dot(dy, RunDouble(pr, p, kd, vd).context); }, qd);
  const std::vector<double> fd_k = FiniteDifferenceGradient(
      [&](const std::vector<double>& p) { return Dot(dy, RunDouble(pr, qd, p, vd).context); }, kd);
  const std::vector<double> fd_v = FiniteDifferenceGradient(
      [&](const std::vector<double>& p) { return Dot(dy, RunDouble(pr, qd, kd, p).context); }, vd);
  fd.insert(fd.end(), fd_k.begin(), fd_k.end());
  fd.insert(fd.end(), fd_v.begin(), fd_v.end());
  EXPECT_LE(MaxNormalisedError(Concat(run.grads), fd), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FusedAttentionGradientTest,
    ::testing::Values(Problem{1, 1, 3, 1, {1}},                               // one token
                      Problem{3, 5, 6, 3, {5, 1, 3}},                         // padding, one real key
                      Problem{2, 4, 6, 2, {4, 3}, 0.3f, {7, 2, 1, 4, 9}},     // dropout
                      Problem{1, 65, 4, 2, {65}, 0.1f, {3, 0, 0, 1, 1}},      // a short last tile
                      Problem{2, 130, 2, 1, {130, 70}, 0.2f, {5, 3, 1, 2, 1}},  // three tiles, padding
                      // Left padding; row 1's first key tile (keys 0-63) is all padding, so its
                      // running max starts at the padding bias and the first real tile rescales
                      // that tile's contributions away.
                      Problem{2, 130, 2, 1, {100, 60}, 0.2f, {6, 3, 1, 2, 1}, /*left_padded=*/true}
                      ));

class FusedVersusEagerTest : public ::testing::TestWithParam<Problem> {};

// Fused and eager attention compute the same function with the same dropout mask; in fp32 they
// differ only in summation order (tile by tile vs whole rows), ~1e-7 relative. Tolerance 1e-5
// (normalised) on the context and on dq, dk, dv together; a different mask element changes the
// context by ~1/S of a row's scale, which at S = 512 is still ~1e-3 > 1e-5.
TEST_P(FusedVersusEagerTest, Fp32MatchesEagerAttention) {
  const Problem& pr = GetParam();
  const Inputs in = RandomInputs(pr, 21);
  const FusedRun fused = RunFused(pr, DType::kF32, in);
  const EagerRun eager = RunEager(pr, DType::kF32, in);
  EXPECT_LE(MaxNormalisedError(fused.out.context.ToFloatVector(),
                               ToDoubles(eager.out.context.ToFloatVector())),
            1e-5);
  EXPECT_LE(MaxNormalisedError(Concat(fused.grads), ToDoubles(Concat(eager.grads))), 1e-5);
}

// f16: the two contracts round in different places (eager rounds the scores and dS * scale to
// f16, fused rounds the unnormalised probabilities), so each differs from the exact function
// by a few f16 ulps (2^-11 relative). Tolerance 4 ulps, normalised: the context is one f16
// rounding of a sum of rounded terms; the gradients stack two roundings on each side.
TEST_P(FusedVersusEagerTest, Fp16MatchesEagerAttentionToHalfPrecision) {
  const Problem& pr = GetParam();
  const Inputs in = RandomInputs(pr, 31);
  const FusedRun fused = RunFused(pr, DType::kF16, in);
  const EagerRun eager = RunEager(pr, DType::kF16, in);
  ASSERT_EQ(fused.out.context.dtype(), DType::kF16);
  ASSERT_EQ(fused.grads.dq.dtype(), DType::kF16);
  EXPECT_LE(MaxNormalisedError(fused.out.context.ToFloatVector(),
                               ToDoubles(eager.out.context.ToFloatVector())),
            4.0 / 2048);
  // dq, dk, dv together: for S = 1, dq and dk are zero up to rounding.
  EXPECT_LE(MaxNormalisedError(Concat(fused.grads), ToDoubles(Concat(eager.grads))), 4.0 / 2048);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FusedVersusEagerTest,
    ::testing::Values(Problem{2, 1, 128, 2, {1, 1}},                              // S = 1
                      Problem{3, 129, 128, 2, {129, 100, 0}, 0.1f, {1, 2, 3, 4, 5}},  // fully padded row
                      Problem{1, 512, 128, 2, {512}, 0.1f, {9, 8, 7, 6, 5}},      // XLM-R's length
                      Problem{2, 200, 192, 2, {150, 200}},                        // head_dim 96
                      // left padding, a first key tile of padding only in row 0
                      Problem{2, 150, 128, 2, {70, 150}, 0.1f, {2, 4, 6, 8, 1}, /*left_padded=*/true}));

// The f16 contract keeps the scores in fp32: q k^T = 2049 is exact in fp32 (eager's f16 GEMM
// output rounds it to 2048 and ties it with the second key, attention_test.cc). Fused: the
// first query's weights are softmax(2049, 2048) / sqrt(2) apart, context[0] ~ 0.67, not 0.5.
TEST(FusedAttentionTest, HalfScoresStayInFp32) {
  const Problem pr{1, 2, 2, 1, {2}};
  const Inputs in{{1, 1, 0, 0}, {2048, 1, 2048, 0}, {1, 0, 0, 1}, {0, 0, 0, 0}};
  const std::vector<float> context = RunFused(pr, DType::kF16, in).out.context.ToFloatVector();
  const double expected = 1.0 / (1.0 + std::exp(-1.0 / std::sqrt(2.0)));
  EXPECT_NEAR(context[0], expected, 1.0 / 1024);
  EXPECT_NEAR(RunEager(pr, DType::kF16, in).out.context.ToFloatVector()[0], 0.5f, 1e-6);
}

TEST(FusedAttentionTest, FullyPaddedRowIsUniformLikeHuggingFace) {
  const Problem pr{1, 70, 2, 1, {0}};  // two key tiles, all padding
  const Inputs in = RandomInputs(pr, 41);
  const std::vector<float> context = RunFused(pr, DType::kF32, in).out.context.ToFloatVector();
  double mean0 = 0, mean1 = 0;
  for (int64_t j = 0; j < pr.seq; ++j) {
    mean0 += in.v[2 * j] / double(pr.seq);
    mean1 += in.v[2 * j + 1] / double(pr.seq);
  }
  for (int64_t i = 0; i < pr.seq; ++i) {
    EXPECT_NEAR(context[2 * i], mean0, 1e-6);
    EXPECT_NEAR(context[2 * i + 1], mean1, 1e-6);
  }
  for (float lse : RunFused(pr, DType::kF32, in).out.logsumexp.ToFloatVector()) {
    EXPECT_FLOAT_EQ(lse, std::log(70.0f));  // not finfo.min: the backward needs exp(s - lse)
  }
}

// Padding keys get exactly zero weight: their v rows and gradients do not matter. Right
// padding, and left padding whose 13 padding keys sit in the first tile beside real ones.
TEST(FusedAttentionTest, PaddingKeysGetNoGradient) {
  for (bool left_padded : {false, true}) {
    Problem pr{1, 80, 4, 2, {67}};
    pr.left_padded = left_padded;
    const FusedRun run = RunFused(pr, DType::kF32, RandomInputs(pr, 51));
    const std::vector<float> dk = run.grads.dk.ToFloatVector(), dv = run.grads.dv.ToFloatVector();
    for (int64_t s = 0; s < pr.seq; ++s) {
      if (pr.IsReal(0, s)) continue;
      for (int64_t c = 0; c < pr.hidden; ++c) {
        EXPECT_EQ(dk[s * pr.hidden + c], 0.0f) << "key " << s << (left_padded ? " left-padded" : "");
        EXPECT_EQ(dv[s * pr.hidden + c], 0.0f) << "key " << s << (left_padded ? " left-padded" : "");
      }
    }
  }
}

TEST(FusedAttentionTest, SameKeySameBitsOtherMicroStepOtherMask) {
  Problem pr{2, 70, 8, 2, {70, 40}, 0.5f, {1, 1, 0, 2, 3}};
  const Inputs in = RandomInputs(pr, 61);
  const FusedRun first = RunFused(pr, DType::kF32, in);
  const FusedRun again = RunFused(pr, DType::kF32, in);
  EXPECT_EQ(again.out.context.ToFloatVector(), first.out.context.ToFloatVector());
  EXPECT_EQ(Concat(again.grads), Concat(first.grads));
  pr.key.micro_step = 1;
  EXPECT_NE(RunFused(pr, DType::kF32, in).out.context.ToFloatVector(),
            first.out.context.ToFloatVector());
}

TEST(FusedAttentionTest, CpuSupportsEveryHeadSize) {
  for (int64_t head_dim : {1, 8, 64, 96, 128}) {
    EXPECT_TRUE(ops::FusedAttentionSupported(Device::kCpu, DType::kF32, head_dim));
    EXPECT_TRUE(ops::FusedAttentionSupported(Device::kCpu, DType::kF16, head_dim));
  }
  EXPECT_FALSE(ops::FusedAttentionSupported(Device::kCpu, DType::kI32, 64));
}

}  // namespace
}  // namespace xlmr
