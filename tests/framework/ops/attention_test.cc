#include "framework/ops/attention.h"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <vector>

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

// The attention numerics written out plainly in Real (double: the exact reference; float with
// `round` = to-half: an emulation of the f16 contract, roundings where the header says).
template <typename Real>
struct Reference {
  const Problem& pr;
  Real (*round)(Real);

  struct Forward {
    std::vector<Real> probs, context;
  };
  struct Grads {
    std::vector<Real> dq, dk, dv;
  };

  Real Scale() const { return static_cast<Real>(1.0 / std::sqrt(double(pr.head_dim()))); }
  Real Kept(int64_t index) const {  // dropout multiplier of probs element `index`
    if (pr.dropout_p == 0.0f) return 1;
    const double scale = 1.0 / (1.0 - double(pr.dropout_p));
    return DropoutUniform(pr.key, index) >= pr.dropout_p ? static_cast<Real>(scale) : 0;
  }

  Forward Run(const std::vector<Real>& q, const std::vector<Real>& k,
              const std::vector<Real>& v) const {
    Forward f{std::vector<Real>(pr.batch * pr.heads * pr.seq * pr.seq),
              std::vector<Real>(pr.elements())};
    const int64_t S = pr.seq, D = pr.head_dim();
    for (int64_t b = 0; b < pr.batch; ++b) {
      for (int64_t h = 0; h < pr.heads; ++h) {
        for (int64_t i = 0; i < S; ++i) {
          std::vector<Real> row(S);
          for (int64_t j = 0; j < S; ++j) {
            Real dot = 0;
            for (int64_t c = 0; c < D; ++c) dot += q[pr.X(b, i, h, c)] * k[pr.X(b, j, h, c)];
            row[j] = round(round(dot) * Scale()) +
                     (pr.IsReal(b, j) ? Real(0) : Real(-3.4028234663852886e38));
          }
          const Real row_max = *std::max_element(row.begin(), row.end());
          Real sum = 0;
          for (Real& x : row) sum += (x = std::exp(x - row_max));
          for (int64_t j = 0; j < S; ++j) f.probs[pr.P(b, h, i, j)] = row[j] / sum;
          for (int64_t c = 0; c < D; ++c) {
            Real acc = 0;
            for (int64_t j = 0; j < S; ++j) {
              const int64_t p = pr.P(b, h, i, j);
              acc += round(f.probs[p] * Kept(p)) * v[pr.X(b, j, h, c)];
            }
            f.context[pr.X(b, i, h, c)] = round(acc);
          }
        }
      }
    }
    return f;
  }

  // Backward of Run for the f16 emulation (the double backward is checked by differences).
  Grads Backward(const std::vector<Real>& dctx, const std::vector<Real>& q,
                 const std::vector<Real>& k, const std::vector<Real>& v,
                 const std::vector<Real>& probs) const {
    Grads g{std::vector<Real>(pr.elements()), std::vector<Real>(pr.elements()),
            std::vector<Real>(pr.elements())};
    const int64_t S = pr.seq, D = pr.head_dim();
    for (int64_t b = 0; b < pr.batch; ++b) {
      for (int64_t h = 0; h < pr.heads; ++h) {
        std::vector<Real> ds(S * S);
        for (int64_t i = 0; i < S; ++i) {
          Real dot = 0;
          for (int64_t j = 0; j < S; ++j) {
            Real d_dropped = 0;
            for (int64_t c = 0; c < D; ++c) {
              d_dropped += dctx[pr.X(b, i, h, c)] * v[pr.X(b, j, h, c)];
            }
            ds[i * S + j] = round(d_dropped) * Kept(pr.P(b, h, i, j));
            dot += ds[i * S + j] * probs[pr.P(b, h, i, j)];
          }
          for (int64_t j = 0; j < S; ++j) {
            const Real p = probs[pr.P(b, h, i, j)];
            ds[i * S + j] = round(round(p * (ds[i * S + j] - dot)) * Scale());
          }
        }
        for (int64_t s = 0; s < S; ++s) {
          for (int64_t c = 0; c < D; ++c) {
            Real dq = 0, dk = 0, dv = 0;
            for (int64_t t = 0; t < S; ++t) {
              const int64_t p = pr.P(b, h, t, s);
              dq += ds[s * S + t] * k[pr.X(b, t, h, c)];
              dk += ds[t * S + s] * q[pr.X(b, t, h, c)];
              dv += round(probs[p] * Kept(p)) * dctx[pr.X(b, t, h, c)];
            }
            g.dq[pr.X(b, s, h, c)] = round(dq);
            g.dk[pr.X(b, s, h, c)] = round(dk);
            g.dv[pr.X(b, s, h, c)] = round(dv);
          }
        }
      }
    }
    return g;
  }
};

double Exact(double x) { return x; }
float ToHalfAndBack(float x) { return HalfToFloat(FloatToHalf(x)); }

ops::AttentionOutput RunOp(const Problem& pr, DType dtype, const std::vector<float>& q,
                           const std::vector<float>& k, const std::vector<float>& v) {
  return ops::Attention(TensorFrom(pr.shape(), dtype, q), TensorFrom(pr.shape(), dtype, k),
                        TensorFrom(pr.shape(), dtype, v), KeyMask(pr), pr.heads, pr.dropout_p,
                        pr.key);
}

ops::AttentionGrads RunBackward(const Problem& pr, DType dtype, const std::vector<float>& dctx,
                                const std::vector<float>& q, const std::vector<float>& k,
                                const std::vector<float>& v, const Tensor& probs) {
  return ops::AttentionBackward(TensorFrom(pr.shape(), dtype, dctx),
                                TensorFrom(pr.shape(), dtype, q), TensorFrom(pr.shape(), dtype, k),
                                TensorFrom(pr.shape(), dtype, v), probs, KeyMask(pr), pr.heads,
                                pr.dropout_p, pr.key);
}

class AttentionGradientTest : public ::testing::TestWithParam<Problem> {};

// Forward tolerances: fp32 sums of <= 6 terms and an fp32 softmax err by ~1e-7 relative, so
// 1e-5 (context, normalised) and 1e-6 (probs, absolute: they are <= 1) leave margin while
// any wrong index, scale or mask gives errors of order 0.1.
// Backward tolerance 1e-5 (max-abs-normalised over dq, dk, dv together, because for S = 1
// dq and dk are exactly zero): the fp32 backward errs by ~2e-7 here and the double central
// differences by ~1e-10, so 1e-5 still has a 50x margin; a wrong term is of order 0.1.
TEST_P(AttentionGradientTest, MatchesDoubleReferenceAndFiniteDifferences) {
  const Problem& pr = GetParam();
  const std::vector<float> q = RandomValues(pr.elements(), 11, -2.0f, 2.0f);
  const std::vector<float> k = RandomValues(pr.elements(), 12, -2.0f, 2.0f);
  const std::vector<float> v = RandomValues(pr.elements(), 13);
  const std::vector<float> upstream = RandomValues(pr.elements(), 14);
  const Reference<double> ref{pr, Exact};

  const ops::AttentionOutput out = RunOp(pr, DType::kF32, q, k, v);
  const auto expected = ref.Run(ToDoubles(q), ToDoubles(k), ToDoubles(v));
  EXPECT_LE(MaxNormalisedError(out.context.ToFloatVector(), expected.context), 1e-5);
  const std::vector<float> probs = out.probs.ToFloatVector();
  for (size_t i = 0; i < probs.size(); ++i) EXPECT_NEAR(probs[i], expected.probs[i], 1e-6);

  const ops::AttentionGrads grads = RunBackward(pr, DType::kF32, upstream, q, k, v, out.probs);
  const std::vector<double> dy = ToDoubles(upstream);
  const std::vector<double> qd = ToDoubles(q), kd = ToDoubles(k), vd = ToDoubles(v);
  std::vector<double> fd = FiniteDifferenceGradient(
      [&](const std::vector<double>& p) { return Dot(dy, ref.Run(p, kd, vd).context); }, qd);
  const std::vector<double> fd_k = FiniteDifferenceGradient(
      [&](const std::vector<double>& p) { return Dot(dy, ref.Run(qd, p, vd).context); }, kd);
  const std::vector<double> fd_v = FiniteDifferenceGradient(
      [&](const std::vector<double>& p) { return Dot(dy, ref.Run(qd, kd, p).context); }, vd);
  fd.insert(fd.end(), fd_k.begin(), fd_k.end());
  fd.insert(fd.end(), fd_v.begin(), fd_v.end());
  std::vector<float> analytic = grads.dq.ToFloatVector();
  for (const Tensor* t : {&grads.dk, &grads.dv}) {
    const std::vector<float> values = t->ToFloatVector();
    analytic.insert(analytic.end(), values.begin(), values.end());
  }
  EXPECT_LE(MaxNormalisedError(analytic, fd), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, AttentionGradientTest,
    ::testing::Values(Problem{1, 1, 3, 1, {1}},        // one token, one head
                      Problem{2, 3, 4, 2, {3, 2}},     // padding in row 1
                      Problem{3, 5, 6, 3, {5, 1, 3}},  // odd sizes, one real key
                      Problem{2, 4, 6, 2, {4, 3}, 0.3f, {7, 2, 1, 4, 9}},  // dropout
                      Problem{1, 6, 5, 1, {6}, 0.5f, {3, 0, 0, 0, 1}},
                      // left padding: the real keys are the last of each row
                      Problem{2, 5, 6, 2, {2, 4}, 0.3f, {4, 1, 0, 3, 2}, /*left_padded=*/true}));

TEST(AttentionTest, PaddingKeysGetExactlyZeroProbability) {
  const Problem pr{2, 5, 4, 2, {5, 2}};
  const std::vector<float> q = RandomValues(pr.elements(), 1, -3.0f, 3.0f);
  const std::vector<float> probs = RunOp(pr, DType::kF32, q, q, q).probs.ToFloatVector();
  for (int64_t h = 0; h < pr.heads; ++h) {
    for (int64_t i = 0; i < pr.seq; ++i) {  // padding queries too: queries are never masked
      for (int64_t j = 2; j < pr.seq; ++j) EXPECT_EQ(probs[pr.P(1, h, i, j)], 0.0f);
    }
  }
}

// A padded sequence gives the same outputs and gradients on its real tokens as the unpadded
// one. Tolerance 1e-6 (normalised): only the sgemm summation order over the (longer, zero
// weighted) key dimension may differ.
TEST(AttentionTest, PaddedSequenceMatchesUnpaddedOnRealTokens) {
  const Problem padded{1, 6, 4, 2, {4}};
  const Problem unpadded{1, 4, 4, 2, {4}};
  std::vector<float> q = RandomValues(padded.elements(), 2), k = RandomValues(padded.elements(), 3),
                     v = RandomValues(padded.elements(), 4),
                     dctx = RandomValues(padded.elements(), 5);
  std::fill(dctx.begin() + unpadded.elements(), dctx.end(), 0.0f);  // padding rows: no gradient
  auto real = [&](const std::vector<float>& x) {
    return std::vector<float>(x.begin(), x.begin() + unpadded.elements());
  };
  const auto out = RunOp(padded, DType::kF32, q, k, v);
  const auto grads = RunBackward(padded, DType::kF32, dctx, q, k, v, out.probs);
  const auto out_u = RunOp(unpadded, DType::kF32, real(q), real(k), real(v));
  const auto grads_u =
      RunBackward(unpadded, DType::kF32, real(dctx), real(q), real(k), real(v), out_u.probs);
  EXPECT_LE(MaxNormalisedError(real(out.context.ToFloatVector()),
                               ToDoubles(out_u.context.ToFloatVector())),
            1e-6);
  for (auto [a, b] : {std::pair{&grads.dq, &grads_u.dq}, std::pair{&grads.dk, &grads_u.dk},
                      std::pair{&grads.dv, &grads_u.dv}}) {
    EXPECT_LE(MaxNormalisedError(real(a->ToFloatVector()), ToDoubles(b->ToFloatVector())), 1e-6);
  }
  const std::vector<float> dk = grads.dk.ToFloatVector(), dv = grads.dv.ToFloatVector();
  for (int64_t i = unpadded.elements(); i < padded.elements(); ++i) {
    EXPECT_EQ(dk[i], 0.0f);  // padding keys have zero probability, so no gradient
    EXPECT_EQ(dv[i], 0.0f);
  }
}

TEST(AttentionTest, FullyPaddedRowSoftmaxesToUniformLikeHuggingFace) {
  const Problem pr{1, 3, 2, 1, {0}};
  const std::vector<float> q = RandomValues(pr.elements(), 6);
  for (float p : RunOp(pr, DType::kF32, q, q, q).probs.ToFloatVector()) {
    EXPECT_FLOAT_EQ(p, 1.0f / 3.0f);
  }
}

TEST(AttentionTest, DropoutMaskFollowsTheKeyAndProbsArePreDropout) {
  Problem pr{2, 4, 4, 2, {4, 4}, 0.5f, {1, 1, 0, 2, 3}};
  const std::vector<float> x = RandomValues(pr.elements(), 7);
  const auto first = RunOp(pr, DType::kF32, x, x, x);
  EXPECT_EQ(RunOp(pr, DType::kF32, x, x, x).context.ToFloatVector(),
            first.context.ToFloatVector());  // same key: bit-identical
  const std::vector<float> probs = first.probs.ToFloatVector();
  for (size_t row = 0; row < probs.size(); row += pr.seq) {
    double sum = 0.0;
    for (int64_t j = 0; j < pr.seq; ++j) sum += probs[row + j];
    EXPECT_NEAR(sum, 1.0, 1e-6);  // a softmax row, not a dropped one
  }
  pr.key.micro_step = 1;
  EXPECT_NE(RunOp(pr, DType::kF32, x, x, x).context.ToFloatVector(), first.context.ToFloatVector());
}

// f16: the op against the float emulation of the f16 contract. The inputs are multiples of
// 2^-8 in [-2, 2], so every QK^T and dC V^T product is exact in fp32 whatever the summation
// order, and their roundings to f16 are deterministic; probs then agree to fp32 softmax
// rounding (2e-6). Later GEMMs may flip a final f16 rounding, hence one f16 ulp (2^-11,
// normalised) for context and two for the gradients (two stacked roundings).
TEST(AttentionTest, HalfPrecisionFollowsTorchAutocastRoundings) {
  const Problem pr{2, 5, 6, 2, {5, 3}, 0.2f, {5, 1, 0, 0, 0}};
  auto dyadic = [&](uint32_t seed) {
    std::vector<float> x = RandomValues(pr.elements(), seed, -2.0f, 2.0f);
    for (float& value : x) value = std::round(value * 256.0f) / 256.0f;
    return x;
  };
  const std::vector<float> q = dyadic(8), k = dyadic(9), v = dyadic(10), dctx = dyadic(11);
  const Reference<float> emulation{pr, ToHalfAndBack};
  const auto expected = emulation.Run(q, k, v);
  const auto out = RunOp(pr, DType::kF16, q, k, v);
  ASSERT_EQ(out.context.dtype(), DType::kF16);
  const std::vector<float> probs = out.probs.ToFloatVector();
  for (size_t i = 0; i < probs.size(); ++i) EXPECT_NEAR(probs[i], expected.probs[i], 2e-6);
  // The roundings matter: without them the probs differ by far more than the tolerance.
  const auto unrounded = Reference<float>{pr, [](float x) { return x; }}.Run(q, k, v);
  double largest_shift = 0.0;
  for (size_t i = 0; i < probs.size(); ++i) {
    largest_shift = std::max(largest_shift, double(std::fabs(unrounded.probs[i] - probs[i])));
  }
  EXPECT_GT(largest_shift, 1e-4);
  EXPECT_LE(MaxNormalisedError(out.context.ToFloatVector(), ToDoubles(expected.context)),
            1.0 / 2048);

  const auto grads = RunBackward(pr, DType::kF16, dctx, q, k, v, out.probs);
  const auto expected_grads = emulation.Backward(dctx, q, k, v, expected.probs);
  EXPECT_LE(MaxNormalisedError(grads.dq.ToFloatVector(), ToDoubles(expected_grads.dq)), 2.0 / 2048);
  EXPECT_LE(MaxNormalisedError(grads.dk.ToFloatVector(), ToDoubles(expected_grads.dk)), 2.0 / 2048);
  EXPECT_LE(MaxNormalisedError(grads.dv.ToFloatVector(), ToDoubles(expected_grads.dv)), 2.0 / 2048);
}

// QK^T = 2049 is exact in fp32 but rounds to 2048 in f16, tying with the second key: under
// the f16 contract the first row splits 0.5 / 0.5 exactly; in fp32 it does not.
TEST(AttentionTest, HalfScoresAreRoundedBeforeTheSoftmax) {
  const Problem pr{1, 2, 2, 1, {2}};
  const std::vector<float> q = {1, 1, 0, 0}, k = {2048, 1, 2048, 0}, v = {1, 0, 0, 1};
  const std::vector<float> half = RunOp(pr, DType::kF16, q, k, v).probs.ToFloatVector();
  EXPECT_EQ(half[0], 0.5f);
  EXPECT_EQ(half[1], 0.5f);
  const std::vector<float> full = RunOp(pr, DType::kF32, q, k, v).probs.ToFloatVector();
  EXPECT_GT(full[0], 0.6f);
}

// Backward twin of the test above: d_context v^T = 2049 rounds to 2048 in f16 (torch's f16
// GEMM output), tying with the other key, so with equal probabilities the softmax gradient and
// hence dq are exactly zero; in fp32 they are not.
TEST(AttentionTest, HalfGradientOfProbsIsRoundedLikeTheGemmOutput) {
  const Problem pr{1, 2, 2, 1, {2}};
  const std::vector<float> q = {0, 0, 0, 0}, k = {1, 0, 0, 1}, v = {2048, 1, 2048, 0};
  const std::vector<float> dctx = {1, 1, 1, 1};
  for (DType dtype : {DType::kF16, DType::kF32}) {
    const auto out = RunOp(pr, dtype, q, k, v);
    const std::vector<float> dq =
        RunBackward(pr, dtype, dctx, q, k, v, out.probs).dq.ToFloatVector();
    const float largest = std::max(std::fabs(dq[0]), std::fabs(dq[1]));
    if (dtype == DType::kF16) {
      EXPECT_EQ(largest, 0.0f);
    } else {
      EXPECT_GT(largest, 0.1f);  // 0.25 / sqrt(2)
    }
  }
}

// A score above 65504 overflows to inf in f16 (as torch's f16 GEMM does); the row's softmax
// then computes inf - inf = NaN, which the loss scaler's finite check is there to catch.
TEST(AttentionTest, HalfScoreOverflowBecomesInfLikeTorch) {
  const Problem pr{1, 2, 2, 1, {2}};
  const std::vector<float> q = {256, 256, 0, 0}, k = {256, 256, 1, 1}, v = {1, 2, 3, 4};
  const std::vector<float> half = RunOp(pr, DType::kF16, q, k, v).probs.ToFloatVector();
  EXPECT_TRUE(std::isnan(half[0]));
  EXPECT_EQ(half[2], 0.5f);  // the zero query row is unaffected
  const std::vector<float> full = RunOp(pr, DType::kF32, q, k, v).probs.ToFloatVector();
  EXPECT_EQ(full[0], 1.0f);  // fp32: 131072 vs 512, no overflow
}

TEST(AttentionDeathTest, HeadsMustDivideTheHiddenSize) {
  const Problem pr{1, 2, 6, 4, {2}};
  const std::vector<float> x(pr.elements(), 0.0f);
  EXPECT_DEATH(RunOp(pr, DType::kF32, x, x, x), "num_heads");
}

}  // namespace
}  // namespace xlmr
