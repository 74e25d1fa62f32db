// ops::VarlenFusedAttention (packed, padding-free batches) against the padded fused kernel
// (ops::FusedAttention) sequence by sequence, against a double reference, and its cu_seqlens
// checks.
//
// Tolerance of the padded comparison. A packed sequence takes the same key tiles, in the same
// order, with the same dropout mask (both forms get the same dropout_stride) as that sequence
// padded (framework/ops/varlen_fused_attention.h). What is left is OpenBLAS: it picks its kernel
// by the matrix shape, and a packed tile is narrower (fewer keys or query rows) than the padded
// one, which also holds padding; so q.k and the tile products sum in another order, and results
// are not bit-equal but differ by a few ulps. Measured here (max error relative to the tensor's
// largest element, over all cases, p = 0 and 0.1): f32 4.5e-7 (up to ~2/3 of the elements
// differ in their last bits), f16 4.6e-4 (~1 f16 ulp: a flipped rounding), bf16 8.2e-4, the
// logsumexp 1.6e-7. Bounds: f32 2e-6, f16 2e-3 (4 ulps), bf16 8e-3 (2 ulps), logsumexp 1e-6.
// What they must catch is O(1e-2) or more: a key of another sequence, a dropout mask element at
// another index (changes a context element by ~p_ij / (1 - p) ~ 1/n), a missing tile; the f32
// bound is the tight one, and the mask does not depend on the dtype. The
// padded runs use S = the dropout stride (a padded length that, in these cases, crosses a key
// tile the packed form never visits and differs from every packed length; the padded form's
// positions must stay below the stride), and zero d_context on padding rows, as the model's
// gradient is there.
#include "framework/ops/varlen_fused_attention.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/ops/attention.h"
#include "framework/ops/fused_attention.h"
#include "framework/random/philox.h"
#include "gtest/gtest.h"
#include "kernels/common/attention_dropout_index.h"
#include "tests/framework/ops/op_test_util.h"
#include "tests/testing/attention_cases.h"

namespace xlmr {
namespace {

using testing::AttentionInputs;
using testing::MaxNormalisedError;
using testing::VarlenAttentionCase;

constexpr DropoutKey kKey{/*seed=*/424242, /*step=*/3, /*micro_step=*/1, /*layer=*/2, /*op=*/1};

struct Pass {
  ops::FusedAttentionOutput out;
  ops::AttentionGrads grads;
};

Pass RunPacked(const VarlenAttentionCase& c, const AttentionInputs& in, float p) {
  Pass run;
  run.out = ops::VarlenFusedAttention(in.q, in.k, in.v, in.cu_seqlens, c.max_length(), c.heads,
                                      p, kKey, c.dropout_stride);
  run.grads = ops::VarlenFusedAttentionBackward(in.d_context, in.q, in.k, in.v, run.out.context,
                                                run.out.logsumexp, in.cu_seqlens, c.max_length(),
                                                c.heads, p, kKey, c.dropout_stride);
  return run;
}

// The packed inputs padded to [B, S, H]: sequence b's tokens first, then padding rows holding
// other values (so a kernel reading them would show), zero d_context on padding rows.
struct Padded {
  int64_t seq;
  Tensor q, k, v, key_mask, d_context;
};

Padded PadInputs(const VarlenAttentionCase& c, const AttentionInputs& in, int64_t seq) {
  const int64_t batch = static_cast<int64_t>(c.lengths.size()), hidden = c.hidden();
  const Shape shape = {batch, seq, hidden};
  Padded out{seq, Tensor(), Tensor(), Tensor(), Tensor::Zeros({batch, seq}, DType::kI32),
             Tensor()};
  const int32_t* cu = in.cu_seqlens.data<int32_t>();
  auto pad = [&](const Tensor& packed, uint32_t seed, bool zero_padding) {
    std::vector<float> values = zero_padding
                                    ? std::vector<float>(static_cast<size_t>(batch * seq * hidden))
                                    : testing::RandomValues(batch * seq * hidden, seed, -3, 3);
    const std::vector<float> rows = packed.ToFloatVector();
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t s = 0; s < c.lengths[b]; ++s) {
        std::copy_n(rows.begin() + (cu[b] + s) * hidden, hidden,
                    values.begin() + (b * seq + s) * hidden);
      }
    }
    return testing::TensorFrom(shape, packed.dtype(), values);
  };
  out.q = pad(in.q, 101, false);
  out.k = pad(in.k, 102, false);
  out.v = pad(in.v, 103, false);
  out.d_context = pad(in.d_context, 0, true);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < c.lengths[b]; ++s) out.key_mask.data<int32_t>()[b * seq + s] = 1;
  }
  return out;
}

Pass RunPadded(const VarlenAttentionCase& c, const Padded& in, float p) {
  Pass run;
  run.out = ops::FusedAttention(in.q, in.k, in.v, in.key_mask, c.heads, p, kKey,
                                c.dropout_stride);
  run.grads =
      ops::FusedAttentionBackward(in.d_context, in.q, in.k, in.v, run.out.context,
                                  run.out.logsumexp, in.key_mask, c.heads, p, kKey,
                                  c.dropout_stride);
  return run;
}

// The real rows of padded [B, S, H] `padded` in packed [T, H] order.
std::vector<float> RealRows(const VarlenAttentionCase& c, const Tensor& padded, int64_t seq) {
  const std::vector<float> all = padded.ToFloatVector();
  const int64_t hidden = c.hidden();
  std::vector<float> rows;
  for (size_t b = 0; b < c.lengths.size(); ++b) {
    rows.insert(rows.end(), all.begin() + b * seq * hidden,
                all.begin() + (b * seq + c.lengths[b]) * hidden);
  }
  return rows;
}

// The real rows of a padded logsumexp [B, heads, S] in packed [heads, T] order.
std::vector<float> RealLogsumexp(const VarlenAttentionCase& c, const Tensor& padded, int64_t seq) {
  const std::vector<float> all = padded.ToFloatVector();
  std::vector<float> rows;
  for (int64_t h = 0; h < c.heads; ++h) {
    for (size_t b = 0; b < c.lengths.size(); ++b) {
      const int64_t first = (static_cast<int64_t>(b) * c.heads + h) * seq;
      rows.insert(rows.end(), all.begin() + first, all.begin() + first + c.lengths[b]);
    }
  }
  return rows;
}

// The bound on the context and gradients (the header comment's measurements): the largest error
// relative to the tensor's largest element.
double BoundFor(DType dtype) {
  switch (dtype) {
    case DType::kF16: return 4.0 / 2048;
    case DType::kBF16: return 2.0 / 256;
    default: return 2e-6;
  }
}
constexpr double kLogsumexpBound = 1e-6;

void ExpectPackedEqualsPadded(const VarlenAttentionCase& c, DType dtype, float p,
                              int64_t padded_seq) {
  const std::string what = c.Name() + " " + DTypeName(dtype) + " p=" + std::to_string(p) +
                           " padded to S=" + std::to_string(padded_seq);
  const AttentionInputs in = testing::VarlenAttentionCaseInputs(c, dtype);
  const Padded padded_in = PadInputs(c, in, padded_seq);
  const Pass packed = RunPacked(c, in, p);
  const Pass padded = RunPadded(c, padded_in, p);
  ASSERT_EQ(packed.out.logsumexp.shape(), (Shape{c.heads, c.tokens()}));
  auto expect = [&](const char* name, const std::vector<float>& a, const std::vector<float>& b,
                    double bound) {
    EXPECT_LE(MaxNormalisedError(a, testing::ToDoubles(b)), bound) << what << " " << name;
  };
  const double bound = BoundFor(dtype);
  expect("context", packed.out.context.ToFloatVector(),
         RealRows(c, padded.out.context, padded_seq), bound);
  // The logsumexp is fp32 whatever dt is.
  expect("logsumexp", packed.out.logsumexp.ToFloatVector(),
         RealLogsumexp(c, padded.out.logsumexp, padded_seq), kLogsumexpBound);
  expect("dq", packed.grads.dq.ToFloatVector(), RealRows(c, padded.grads.dq, padded_seq), bound);
  expect("dk", packed.grads.dk.ToFloatVector(), RealRows(c, padded.grads.dk, padded_seq), bound);
  expect("dv", packed.grads.dv.ToFloatVector(), RealRows(c, padded.grads.dv, padded_seq), bound);
}

// Head sizes the CUDA kernels do not take (the CPU takes any), and the GPU test's cases.
std::vector<VarlenAttentionCase> CpuCases() {
  std::vector<VarlenAttentionCase> cases = {
      {{1, 130, 64, 65, 5, 129, 2}, 2, 24, 200},  // mixed, 1 and the longest, across tiles
      {{77}, 3, 8, 150},                           // one sequence only
      {{3, 1, 70, 2, 66, 1, 1, 9, 41, 12, 1, 70, 33, 64, 8, 19}, 1, 16, 140},  // many
      {{3, 0, 70, 0, 1}, 2, 8, 80},  // sequences of no tokens (cu_seqlens repeats an offset)
  };
  for (const VarlenAttentionCase& c : testing::VarlenAttentionCases()) {
    if (c.max_length() <= 200) cases.push_back(c);  // the CPU oracle's share of CPU time
  }
  return cases;
}

TEST(VarlenFusedAttentionTest, EqualsThePaddedKernelSequenceBySequence) {
  for (const VarlenAttentionCase& c : CpuCases()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (float p : {0.0f, 0.1f}) {
        ExpectPackedEqualsPadded(c, dtype, p, c.dropout_stride);
      }
    }
  }
}

// The padded length does not move the mask: padded exactly to the longest sequence too, and a
// stride equal to the longest sequence.
TEST(VarlenFusedAttentionTest, EqualsThePaddedKernelAtAnyPaddedLength) {
  VarlenAttentionCase c{{1, 130, 64, 65, 5, 129, 2}, 2, 24, 200};
  for (int64_t seq : {int64_t{130}, int64_t{131}, int64_t{193}}) {
    ExpectPackedEqualsPadded(c, DType::kF32, 0.1f, seq);
  }
  c.dropout_stride = 130;
  for (int64_t seq : {int64_t{130}}) {
    ExpectPackedEqualsPadded(c, DType::kF32, 0.1f, seq);
  }
}

// The double reference, written on the packed layout: softmax over the sequence's own keys,
// the mask element of (b * heads + h, i, j) at AttentionDropoutIndex with the case's stride.
// Tolerance 1e-5 normalised (fp32 sums, as fused_attention_test.cc); a key of another sequence
// or a mask element at another index changes the context by ~1e-2.
TEST(VarlenFusedAttentionTest, MatchesDoubleReferenceWithDropout) {
  const VarlenAttentionCase c{{5, 1, 70, 3}, 2, 4, 80};
  const float p = 0.2f;
  const AttentionInputs in = testing::VarlenAttentionCaseInputs(c, DType::kF32);
  const std::vector<float> q = in.q.ToFloatVector(), k = in.k.ToFloatVector(),
                           v = in.v.ToFloatVector();
  const int64_t hidden = c.hidden(), D = c.head_dim;
  std::vector<double> expected(q.size());
  int64_t first = 0;
  for (size_t b = 0; b < c.lengths.size(); ++b) {
    const int64_t n = c.lengths[b];
    for (int64_t h = 0; h < c.heads; ++h) {
      const int64_t pair = static_cast<int64_t>(b) * c.heads + h;
      for (int64_t i = 0; i < n; ++i) {
        std::vector<double> row(n);
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d) {
            dot += double(q[(first + i) * hidden + h * D + d]) * k[(first + j) * hidden + h * D + d];
          }
          row[j] = dot / std::sqrt(double(D));
        }
        const double m = *std::max_element(row.begin(), row.end());
        double sum = 0;
        for (double& x : row) sum += (x = std::exp(x - m));
        for (int64_t d = 0; d < D; ++d) {
          double acc = 0;
          for (int64_t j = 0; j < n; ++j) {
            const int64_t index = kernels::AttentionDropoutIndex(pair, c.dropout_stride, i, j);
            if (DropoutUniform(kKey, index) >= p) {
              acc += row[j] / sum / (1.0 - p) * v[(first + j) * hidden + h * D + d];
            }
          }
          expected[(first + i) * hidden + h * D + d] = acc;
        }
      }
    }
    first += n;
  }
  const Pass run = RunPacked(c, in, p);
  EXPECT_LE(MaxNormalisedError(run.out.context.ToFloatVector(), expected), 1e-5);
}

// No token attends outside its sequence: new values in one sequence change nothing of the
// others, forward or backward (bit for bit).
TEST(VarlenFusedAttentionTest, SequencesDoNotSeeEachOther) {
  const VarlenAttentionCase c{{40, 1, 90, 65}, 2, 8, 96};
  AttentionInputs in = testing::VarlenAttentionCaseInputs(c, DType::kF32);
  const Pass before = RunPacked(c, in, 0.1f);
  // Sequence 2 (rows 41-130) gets new q, k, v and d_context.
  for (Tensor* t : {&in.q, &in.k, &in.v, &in.d_context}) {
    std::vector<float> values = t->ToFloatVector();
    for (int64_t r = 41; r < 131; ++r) {
      for (int64_t d = 0; d < c.hidden(); ++d) values[r * c.hidden() + d] += 0.5f;
    }
    *t = testing::TensorFrom(t->shape(), DType::kF32, values);
  }
  const Pass after = RunPacked(c, in, 0.1f);
  auto outside = [&](const Tensor& t) {
    std::vector<float> values = t.ToFloatVector();
    values.erase(values.begin() + 41 * c.hidden(), values.begin() + 131 * c.hidden());
    return values;
  };
  EXPECT_EQ(outside(after.out.context), outside(before.out.context));
  EXPECT_EQ(outside(after.grads.dq), outside(before.grads.dq));
  EXPECT_EQ(outside(after.grads.dk), outside(before.grads.dk));
  EXPECT_EQ(outside(after.grads.dv), outside(before.grads.dv));
  EXPECT_NE(after.out.context.ToFloatVector(), before.out.context.ToFloatVector());
}

// Eager attention with the same stride draws the same mask as fused attention: the padded
// forms of the eager fallback and the fused path agree. Tolerance as FusedVersusEagerTest
// (fused_attention_test.cc): 1e-5 normalised in fp32; a different mask moves the context by
// ~1e-2 here.
TEST(VarlenFusedAttentionTest, EagerAttentionTakesTheSameStride) {
  const VarlenAttentionCase c{{70, 9}, 2, 8, 100};
  const AttentionInputs in = testing::VarlenAttentionCaseInputs(c, DType::kF32);
  const Padded padded = PadInputs(c, in, 75);
  const Tensor fused = RunPadded(c, padded, 0.1f).out.context;
  const Tensor eager = ops::Attention(padded.q, padded.k, padded.v, padded.key_mask, c.heads, 0.1f,
                                      kKey, c.dropout_stride)
                           .context;
  EXPECT_LE(MaxNormalisedError(eager.ToFloatVector(), testing::ToDoubles(fused.ToFloatVector())),
            1e-5);
  // And the default stride (S = 75) is another mask.
  const Tensor other =
      ops::Attention(padded.q, padded.k, padded.v, padded.key_mask, c.heads, 0.1f, kKey).context;
  EXPECT_GT(MaxNormalisedError(other.ToFloatVector(), testing::ToDoubles(fused.ToFloatVector())),
            1e-3);
}

Tensor Offsets(const std::vector<int32_t>& values) {
  Tensor t = Tensor::Zeros({static_cast<int64_t>(values.size())}, DType::kI32);
  std::copy(values.begin(), values.end(), t.data<int32_t>());
  return t;
}

TEST(ValidateCuSeqlensTest, AcceptsAConsistentBatch) {
  EXPECT_TRUE(ops::ValidateCuSeqlens(Offsets({0, 3, 3, 10}), 10, 7).ok());
  EXPECT_TRUE(ops::ValidateCuSeqlens(Offsets({0, 1}), 1, 1).ok());
}

TEST(ValidateCuSeqlensTest, RejectsOffByOneAtTheEnd) {
  const absl::Status short_end = ops::ValidateCuSeqlens(Offsets({0, 3, 9}), 10, 6);
  EXPECT_FALSE(short_end.ok());
  EXPECT_NE(short_end.message().find("cu_seqlens[2] = 9 must equal the token count 10"),
            std::string::npos)
      << short_end.message();
  EXPECT_FALSE(ops::ValidateCuSeqlens(Offsets({0, 3, 11}), 10, 8).ok());
}

TEST(ValidateCuSeqlensTest, RejectsEveryOtherInconsistency) {
  EXPECT_NE(ops::ValidateCuSeqlens(Offsets({1, 3, 10}), 10, 7).message().find("cu_seqlens[0]"),
            std::string::npos);
  EXPECT_NE(ops::ValidateCuSeqlens(Offsets({0, 5, 4, 10}), 10, 6).message().find("decrease"),
            std::string::npos);
  EXPECT_NE(ops::ValidateCuSeqlens(Offsets({0, 3, 10}), 10, 8).message().find("max_seqlen"),
            std::string::npos);
  EXPECT_FALSE(ops::ValidateCuSeqlens(Offsets({0}), 0, 0).ok());
  EXPECT_FALSE(ops::ValidateCuSeqlens(Tensor::Zeros({3}, DType::kF32), 10, 7).ok());
}

TEST(VarlenFusedAttentionDeathTest, OpRejectsCuSeqlensOffByOneAtTheEnd) {
  const VarlenAttentionCase c{{4, 6}, 1, 4, 8};
  const AttentionInputs in = testing::VarlenAttentionCaseInputs(c, DType::kF32);
  EXPECT_DEATH(ops::VarlenFusedAttention(in.q, in.k, in.v, Offsets({0, 4, 9}), 6, 1, 0.0f, kKey, 8),
               "must equal the token count 10");
}

TEST(VarlenFusedAttentionDeathTest, StrideShorterThanTheLongestSequence) {
  const VarlenAttentionCase c{{4, 6}, 1, 4, 8};
  const AttentionInputs in = testing::VarlenAttentionCaseInputs(c, DType::kF32);
  EXPECT_DEATH(ops::VarlenFusedAttention(in.q, in.k, in.v, in.cu_seqlens, 6, 1, 0.1f, kKey, 5),
               "dropout_stride 5");
}

}  // namespace
}  // namespace xlmr
