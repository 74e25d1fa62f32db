// ops::AdamWStep on the CPU against a plain scalar statement of framework/optim/adamw.h's
// formula, bit for bit (tolerance 0: the kernel is vectorised and built per instruction set, and
// every variant must round exactly as the formula says), and the run bookkeeping: only the runs'
// elements change, and the half working copy is written for exactly those. The other passes of
// framework/ops/optim.h are tested through their callers (tests/framework/optim/grad_clip_test,
// tests/framework/amp/loss_scaler_test) and against the GPU (tests/gpu/optim_test).
#include "framework/ops/optim.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "framework/tensor/half.h"
#include "gtest/gtest.h"
#include "tests/framework/ops/op_test_util.h"

namespace xlmr {
namespace {

using ops::AdamWDecayRun;
using ops::AdamWStepScalars;
using testing::RandomValues;
using testing::TensorFrom;

// The scalars of step 4 with lr 3e-3, weight decay 0.01, beta2 0.999, eps 1e-8, as
// framework/optim's ComputeAdamWStepScalars rounds them; lerp_weight picks torch's lerp formula
// (below 0.5: from exp_avg; else from grad).
AdamWStepScalars ScalarsWithLerpWeight(float lerp_weight) {
  AdamWStepScalars s;
  s.decay_factor = static_cast<float>(1.0 - 3e-3 * 0.01);
  s.lerp_weight = lerp_weight;
  s.beta2 = 0.999f;
  s.one_minus_beta2 = static_cast<float>(1.0 - 0.999);
  s.bias_correction2_sqrt = static_cast<float>(std::pow(1.0 - std::pow(0.999, 4.0), 0.5));
  s.eps = 1e-8f;
  s.neg_step_size = static_cast<float>(-(3e-3 / (1.0 - std::pow(1.0 - lerp_weight, 4.0))));
  return s;
}

// The update as framework/optim/adamw.h states it, one element at a time in plain scalar code
// (this file is built without -mfma, so the compiler cannot contract anything here).
void ScalarAdamWUpdate(const AdamWStepScalars& s, bool decay, float* param, const float* grad,
                       float* exp_avg, float* exp_avg_sq, int64_t n) {
  const float decay_factor = decay ? s.decay_factor : 1.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float diff = grad[i] - exp_avg[i];
    const float m = std::fabs(s.lerp_weight) < 0.5f
                        ? std::fma(s.lerp_weight, diff, exp_avg[i])
                        : std::fma(s.lerp_weight - 1.0f, diff, grad[i]);
    const float product = s.one_minus_beta2 * grad[i];
    const float v = std::fma(product, grad[i], exp_avg_sq[i] * s.beta2);
    const float root = std::sqrt(v);
    const float denom = root / s.bias_correction2_sqrt + s.eps;
    const float step = s.neg_step_size * m;
    const float decayed = param[i] * decay_factor;
    param[i] = decayed + step / denom;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
  }
}

// Host copies of AdamW's four buffers, and the same values as CPU tensors.
struct AdamWBuffers {
  std::vector<float> param, grad, m, v;

  AdamWBuffers(int64_t n, uint32_t seed)
      : param(RandomValues(n, seed)),
        grad(RandomValues(n, seed + 1, -1e-2f, 1e-2f)),
        m(RandomValues(n, seed + 2, -1e-2f, 1e-2f)),
        v(RandomValues(n, seed + 3, 0.0f, 1e-4f)) {}

  // Runs ops::AdamWStep on tensors of these values and copies the results back.
  void StepWithOp(const AdamWStepScalars& s, const std::vector<AdamWDecayRun>& runs,
                  Tensor* half) {
    const Shape shape = {static_cast<int64_t>(param.size())};
    Tensor p = TensorFrom(shape, DType::kF32, param), g = TensorFrom(shape, DType::kF32, grad);
    Tensor m_t = TensorFrom(shape, DType::kF32, m), v_t = TensorFrom(shape, DType::kF32, v);
    ops::AdamWStep(s, runs, p, g, m_t, v_t, half);
    param = p.ToFloatVector();
    m = m_t.ToFloatVector();
    v = v_t.ToFloatVector();
  }

  void StepWithScalarCode(const AdamWStepScalars& s, const std::vector<AdamWDecayRun>& runs) {
    for (const AdamWDecayRun& run : runs) {
      ScalarAdamWUpdate(s, run.decay, &param[run.offset], &grad[run.offset], &m[run.offset],
                        &v[run.offset], run.size);
    }
  }
};

// `value` rounded once to f16 or bf16, as a float.
float RoundedTo(DType half_dtype, float value) {
  return half_dtype == DType::kF16 ? HalfToFloat(FloatToHalf(value))
                                   : BFloat16ToFloat(FloatToBFloat16(value));
}

// Bitwise equality (EXPECT_EQ on floats would also accept +0 for -0).
void ExpectSameBits(const char* what, const std::vector<float>& actual,
                    const std::vector<float>& expected) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(std::signbit(actual[i]), std::signbit(expected[i])) << what << "[" << i << "]";
    ASSERT_EQ(actual[i], expected[i]) << what << "[" << i << "]";
  }
}

// Both of torch's lerp formulas, with and without decay, through the vector body and the tail,
// and one run longer than a part of the CPU threads' split (32768 elements).
TEST(AdamWStepTest, IsTheScalarFormulaBitForBit) {
  for (float lerp_weight : {0.1f, 0.7f}) {
    const AdamWStepScalars s = ScalarsWithLerpWeight(lerp_weight);
    for (bool decay : {true, false}) {
      for (int64_t n : {1, 7, 16, 17, 64 + 13, 1000, 3 * 32768 + 5}) {
        SCOPED_TRACE(::testing::Message()
                     << "lerp weight " << lerp_weight << ", decay " << decay << ", n " << n);
        AdamWBuffers ours(n, 7), reference(n, 7);
        ours.StepWithOp(s, {{0, n, decay}}, nullptr);
        reference.StepWithScalarCode(s, {{0, n, decay}});
        ExpectSameBits("param", ours.param, reference.param);
        ExpectSameBits("exp_avg", ours.m, reference.m);
        ExpectSameBits("exp_avg_sq", ours.v, reference.v);
      }
    }
  }
}

// [0, 5) decays, [5, 5) is empty, [9, 109) does not decay; [5, 9) and [109, 120) are gaps, as
// the parameter store's alignment padding. The half working copy gets each updated parameter
// rounded once, and nothing in the gaps.
TEST(AdamWStepTest, UpdatesOnlyItsRunsAndWritesTheirHalfCopy) {
  const std::vector<AdamWDecayRun> runs = {{0, 5, true}, {5, 0, true}, {9, 100, false}};
  const int64_t n = 120;
  const float kUntouched = 7.0f;  // exact in f16 and bf16
  const AdamWStepScalars s = ScalarsWithLerpWeight(0.1f);
  for (DType half_dtype : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(DTypeName(half_dtype));
    AdamWBuffers ours(n, 20), reference(n, 20);
    Tensor half = TensorFrom({n}, half_dtype, std::vector<float>(n, kUntouched));
    ours.StepWithOp(s, runs, &half);
    reference.StepWithScalarCode(s, runs);
    ExpectSameBits("param (gaps unchanged)", ours.param, reference.param);
    ExpectSameBits("exp_avg (gaps unchanged)", ours.m, reference.m);
    ExpectSameBits("exp_avg_sq (gaps unchanged)", ours.v, reference.v);
    const std::vector<float> written = half.ToFloatVector();
    for (int64_t i = 0; i < n; ++i) {
      const bool in_gap = (i >= 5 && i < 9) || i >= 109;
      const float expected = in_gap ? kUntouched : RoundedTo(half_dtype, ours.param[i]);
      ASSERT_EQ(written[i], expected) << "half copy[" << i << "]";
    }
  }
}

}  // namespace
}  // namespace xlmr
