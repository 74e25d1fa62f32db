// kernels/cuda/optim.h against its CPU twin kernels/cpu/optim.h, called the way the trainer
// calls them (AdamW::Step, GlobalL2Norm, ClipGradNorm, DynamicLossScaler on a
// CUDA ParameterStore) and directly where a contract detail needs it (gaps between AdamW runs,
// the sum of squares at sizes around the reduction's block and grid limits).
//
// Tolerances, and why:
//   output                               | bound                         | reason
//   -------------------------------------+-------------------------------+---------------------------
//   AdamW exp_avg, exp_avg_sq            | bit-equal                     | the same two fused
//                                        |                               | multiply-adds, every other
//                                        |                               | op rounded on its own
//   AdamW parameters                     | 1 ulp of f32 (0 expected)     | also sqrt and division are
//                                        |                               | correctly rounded on both
//                                        |                               | sides; a wrong operand or
//                                        |                               | order is off by far more
//   fp16 working copy after AdamW        | bit-equal to fp16(GPU param)  | one __float2half_rn of the
//                                        |                               | value just written
//   fp16 working copy after EnableHalf.. | bit-equal to fp16(master)     | one rounding, both sides
//   unscaled / clipped gradients         | bit-equal (finite elements)   | one rounded multiply
//   sum of squares vs the CPU's          | 2 (n - 1) 2^-53 relative      | exact squares >= 0 summed
//                                        |                               | in double: each order is
//                                        |                               | within (n - 1) 2^-53 of
//                                        |                               | the exact sum
//   sum of squares, run twice            | bit-equal                     | reduction shape fixed by n
// Planted NaNs are compared by class only: the GPU's multiply returns its canonical NaN, the
// CPU's keeps the payload. Skipped (with the reason) when no GPU is visible.
#include "kernels/cuda/optim.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "framework/amp/loss_scaler.h"
#include "framework/optim/adamw.h"
#include "framework/optim/grad_clip.h"
#include "framework/tensor/half.h"
#include "framework/tensor/parameter_store.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cpu/optim.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr::kernels::cuda {
namespace {

using ::xlmr::testing::GpuTest;

// ---- Inputs ----

// N(0, scale) values with awkward ones mixed in: exact zeros, f32 subnormals (the GPU must not
// flush them) and a few values 1000x larger.
std::vector<float> RandomFloats(int64_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    switch (i % 97) {
      case 13: values[i] = 0.0f; break;
      case 29:
        values[i] = std::numeric_limits<float>::denorm_min() * static_cast<float>(i % 1000);
        break;
      case 71: values[i] = 1000.0f * normal(rng); break;
      default: values[i] = normal(rng);
    }
  }
  return values;
}

// Second moments: non-negative, some exactly zero.
std::vector<float> RandomSecondMoments(int64_t n, uint32_t seed) {
  std::vector<float> values = RandomFloats(n, seed, 1e-3f);
  for (float& v : values) v = v * v;
  return values;
}

Tensor CpuTensor(const std::vector<float>& values) {
  Tensor tensor = Tensor::Zeros({static_cast<int64_t>(values.size())}, DType::kF32);
  tensor.CopyFromFloats(values);
  return tensor;
}

Tensor GpuTensor(const std::vector<float>& values) {
  Tensor tensor = Tensor::Zeros({static_cast<int64_t>(values.size())}, DType::kF32, Device::kCuda);
  tensor.CopyFromFloats(values);
  return tensor;
}

// ---- Comparisons ----

// Distance in units in the last place: adjacent floats are 1 apart, +0 and -0 are 0 apart.
int64_t UlpDistance(float a, float b) {
  const auto ordered = [](float value) {
    const uint32_t bits = FloatBits(value);
    return (bits & 0x80000000u) ? -static_cast<int64_t>(bits & 0x7fffffffu)
                                : static_cast<int64_t>(bits);
  };
  return std::llabs(ordered(a) - ordered(b));
}

// Expects every element within `max_ulps` (0: the same bits). Elements in `non_finite` must be
// inf or NaN on both sides (NaN payloads differ between GPU and CPU). Reports the count and the
// first few mismatches.
void ExpectWithinUlps(const std::string& what, const std::vector<float>& gpu,
                      const std::vector<float>& cpu, int64_t max_ulps,
                      const std::set<int64_t>& non_finite = {}) {
  ASSERT_EQ(gpu.size(), cpu.size()) << what;
  int64_t mismatches = 0;
  std::ostringstream examples;
  for (size_t i = 0; i < cpu.size(); ++i) {
    bool ok;
    if (non_finite.count(static_cast<int64_t>(i)) > 0) {
      ok = !std::isfinite(gpu[i]) && std::isnan(gpu[i]) == std::isnan(cpu[i]);
    } else {
      ok = FloatBits(gpu[i]) == FloatBits(cpu[i]) || UlpDistance(gpu[i], cpu[i]) <= max_ulps;
    }
    if (ok) continue;
    if (++mismatches <= 5) {
      examples << "\n  [" << i << "] gpu " << gpu[i] << " (0x" << std::hex << FloatBits(gpu[i])
               << "), cpu " << cpu[i] << " (0x" << FloatBits(cpu[i]) << std::dec << ")";
    }
  }
  EXPECT_EQ(mismatches, 0) << what << ": " << mismatches << " of " << cpu.size()
                           << " elements are more than " << max_ulps << " ulp apart"
                           << examples.str();
}

// The fp16 (or bf16) copy must be exactly the rounding of the given fp32 values.
void ExpectHalfOf(const std::string& what, const Tensor& half, const std::vector<float>& values) {
  Tensor expected = Tensor::Zeros({static_cast<int64_t>(values.size())}, half.dtype());
  for (size_t i = 0; i < values.size(); ++i) {
    if (half.dtype() == DType::kBF16) {
      expected.data<BFloat16>()[i] = FloatToBFloat16(values[i]);
    } else {
      expected.data<Half>()[i] = FloatToHalf(values[i]);
    }
  }
  ::xlmr::testing::ExpectBitEqual(what, half, expected);
}

// ---- AdamW through optim::AdamW on a CUDA ParameterStore ----

// 501 parameters of awkward sizes whose decay flag alternates, so that with weight decay there
// are 501 runs (three launches of at most kRunsPerLaunch), plus one parameter larger than a
// resident grid so the grid-stride loop wraps.
std::vector<ParameterSpec> AlternatingDecaySpecs() {
  const int64_t sizes[] = {1, 3, 7, 768, 1000, 4099};
  std::vector<ParameterSpec> specs;
  for (int i = 0; i < 500; ++i) {
    specs.push_back({"p" + std::to_string(i), {sizes[i % 6]}, i % 2 == 0, 0, /*read_in_half=*/true});
  }
  specs.push_back({"large", {1 << 21, 3}, true, 0, /*read_in_half=*/true});
  return specs;
}

void ExpectAdamWMatchesCpu(double weight_decay, DType half_dtype = DType::kF16) {
  const std::vector<ParameterSpec> specs = AlternatingDecaySpecs();
  ParameterStore cpu_store(specs, Device::kCpu);
  ParameterStore gpu_store(specs, Device::kCuda);
  const int64_t n = cpu_store.total_elements();
  const std::vector<float> initial = RandomFloats(n, 1, 0.05f);
  cpu_store.master().CopyFromFloats(initial);
  gpu_store.master().CopyFromFloats(initial);
  gpu_store.EnableHalfCopy(half_dtype);  // the registered CUDA refresh
  ExpectHalfOf("fp16 copy after EnableHalfCopy", gpu_store.half_copy(), initial);

  optim::AdamWOptions options;
  options.weight_decay = weight_decay;
  optim::AdamW cpu_adamw(cpu_store, options);
  optim::AdamW gpu_adamw(gpu_store, options);
  // Without decay the segments are the stretches that the store's 64-element alignment padding
  // separates (most sizes here are not multiples of 64), so the GPU's launches skip gaps.
  size_t contiguous_stretches = 0;
  int64_t end = -1;
  for (int i = 0; i < cpu_store.size(); ++i) {
    if (cpu_store.range(i).offset != end) ++contiguous_stretches;
    end = cpu_store.range(i).offset + cpu_store.range(i).size;
  }
  ASSERT_GT(contiguous_stretches, 1u);
  ASSERT_EQ(cpu_adamw.segments().size(), weight_decay > 0 ? 501u : contiguous_stretches);
  // Mid-training moments, so that both lerp and the v update see realistic non-zero state.
  const Tensor m0 = CpuTensor(RandomFloats(n, 2, 1e-3f));
  const Tensor v0 = CpuTensor(RandomSecondMoments(n, 3));
  ASSERT_TRUE(cpu_adamw.RestoreState(7, m0, v0).ok());
  ASSERT_TRUE(gpu_adamw.RestoreState(7, m0, v0).ok());

  for (int step = 0; step < 4; ++step) {
    SCOPED_TRACE("step " + std::to_string(step) + ", weight_decay " + std::to_string(weight_decay));
    const std::vector<float> grads = RandomFloats(n, 10 + step, 1e-2f);
    cpu_store.grads().CopyFromFloats(grads);
    gpu_store.grads().CopyFromFloats(grads);
    const double lr = 2e-5 * (1.0 - 0.1 * step);
    cpu_adamw.Step(lr);
    gpu_adamw.Step(lr);
    ExpectWithinUlps("exp_avg", gpu_adamw.exp_avg().ToFloatVector(),
                     cpu_adamw.exp_avg().ToFloatVector(), 0);
    ExpectWithinUlps("exp_avg_sq", gpu_adamw.exp_avg_sq().ToFloatVector(),
                     cpu_adamw.exp_avg_sq().ToFloatVector(), 0);
    const std::vector<float> gpu_params = gpu_store.master().ToFloatVector();
    const std::vector<float> cpu_params = cpu_store.master().ToFloatVector();
    ExpectWithinUlps("parameters", gpu_params, cpu_params, 1);
    ExpectHalfOf("fp16 copy written by the fused step", gpu_store.half_copy(), gpu_params);
    // Each step is compared from the same parameters (an allowed ulp must not compound).
    gpu_store.master().CopyFromFloats(cpu_params);
  }
}

class CudaOptimTest : public GpuTest {};

TEST_F(CudaOptimTest, AdamWWithWeightDecayMatchesCpu) { ExpectAdamWMatchesCpu(0.01); }

TEST_F(CudaOptimTest, AdamWWithoutWeightDecayMatchesCpu) { ExpectAdamWMatchesCpu(0.0); }

// --bf16: the fused step writes the bf16 working copy (__float2bfloat16_rn of each new param).
TEST_F(CudaOptimTest, AdamWWritesTheBf16WorkingCopy) { ExpectAdamWMatchesCpu(0.01, DType::kBF16); }

TEST_F(CudaOptimTest, AdamWStepUpdatesOnlyItsRunsAndSkipsEmptyOnes) {
  // [0, 5) decays, [5, 5) is empty, [9, 109) does not decay; [5, 9) and [109, 120) are gaps.
  const std::vector<AdamWDecayRun> runs = {{0, 5, true}, {5, 0, true}, {9, 100, false}};
  const int64_t n = 120;
  std::vector<float> param = RandomFloats(n, 20, 0.05f), m = RandomFloats(n, 21, 1e-3f);
  std::vector<float> v = RandomSecondMoments(n, 22);
  const std::vector<float> grad = RandomFloats(n, 23, 1e-2f);
  Tensor gpu_param = GpuTensor(param), gpu_m = GpuTensor(m), gpu_v = GpuTensor(v);
  Tensor half = Tensor::Zeros({n}, DType::kF16, Device::kCuda);

  optim::AdamWOptions options;
  options.weight_decay = 0.1;
  const AdamWStepScalars s = optim::ComputeAdamWStepScalars(options, 1e-3, 3);
  AdamWStep(s, runs, gpu_param, GpuTensor(grad), gpu_m, gpu_v, &half);

  for (const AdamWDecayRun& run : runs) {
    cpu::AdamWUpdateRange(s, run.decay, &param[run.offset], &grad[run.offset], &m[run.offset],
                          &v[run.offset], run.size);
  }
  ExpectWithinUlps("parameters (gaps unchanged)", gpu_param.ToFloatVector(), param, 1);
  ExpectWithinUlps("exp_avg (gaps unchanged)", gpu_m.ToFloatVector(), m, 0);
  ExpectWithinUlps("exp_avg_sq (gaps unchanged)", gpu_v.ToFloatVector(), v, 0);
  std::vector<float> expected_half = gpu_param.ToFloatVector();
  for (int64_t i = 5; i < 9; ++i) expected_half[i] = 0.0f;    // gap: never written
  for (int64_t i = 109; i < n; ++i) expected_half[i] = 0.0f;  // tail gap
  ExpectHalfOf("fp16 copy (written for updated elements only)", half, expected_half);
}

// ---- Unscale and finite check through DynamicLossScaler ----

amp::DynamicLossScaler Scaler(double init_scale, bool enabled) {
  amp::LossScalerOptions options;
  options.init_scale = init_scale;
  options.min_scale = 0.0;
  return amp::DynamicLossScaler(options, enabled);
}

// Runs the scaler on equal CPU and GPU copies of `values`; both must agree on finiteness and on
// every resulting value (planted non-finite ones by class).
void ExpectUnscaleMatchesCpu(const amp::DynamicLossScaler& scaler, const std::vector<float>& values,
                             const std::set<int64_t>& planted) {
  Tensor cpu = CpuTensor(values);
  Tensor gpu = GpuTensor(values);
  const bool cpu_finite = scaler.UnscaleAndCheckFinite(cpu);
  const bool gpu_finite = scaler.UnscaleAndCheckFinite(gpu);
  EXPECT_EQ(gpu_finite, cpu_finite);
  EXPECT_EQ(gpu_finite, planted.empty());
  // Disabled, the pass only reads: even NaN payloads must survive.
  ExpectWithinUlps("gradients", gpu.ToFloatVector(), cpu.ToFloatVector(), 0,
                   scaler.enabled() ? planted : std::set<int64_t>{});
}

TEST_F(CudaOptimTest, UnscaleAndCheckFiniteMatchesCpu) {
  // 3 has an inexact reciprocal, so the multiply rounds; 65536 is the default.
  for (double scale : {65536.0, 3.0}) {
    for (bool enabled : {true, false}) {
      SCOPED_TRACE("scale " + std::to_string(scale) + (enabled ? ", enabled" : ", disabled"));
      const amp::DynamicLossScaler scaler = Scaler(scale, enabled);
      for (int64_t n : {1, 1000003}) {
        std::vector<float> values = RandomFloats(n, 30, 1000.0f);
        ExpectUnscaleMatchesCpu(scaler, values, {});
        if (n == 1) continue;
        const int64_t last = n - 1, middle = n / 2;
        values[last] = std::numeric_limits<float>::infinity();
        ExpectUnscaleMatchesCpu(scaler, values, {last});
        values[last] = 1.0f;
        values[middle] = std::numeric_limits<float>::quiet_NaN();
        ExpectUnscaleMatchesCpu(scaler, values, {middle});
      }
    }
  }
}

TEST_F(CudaOptimTest, FiniteFlagIsResetBetweenCalls) {
  const amp::DynamicLossScaler scaler = Scaler(1024.0, true);
  std::vector<float> values = RandomFloats(5000, 31, 1.0f);
  values[17] = -std::numeric_limits<float>::infinity();
  Tensor bad = GpuTensor(values);
  EXPECT_FALSE(scaler.UnscaleAndCheckFinite(bad));
  values[17] = 0.5f;
  Tensor good = GpuTensor(values);
  EXPECT_TRUE(scaler.UnscaleAndCheckFinite(good)) << "a previous overflow leaked into this call";
}

// ---- Global norm and clipping ----

TEST_F(CudaOptimTest, SumOfSquaresMatchesCpuWithinTheSummationBound) {
  // Around one block (256), the grid cap (1024 blocks x 256 threads = 262144) and far past it.
  for (int64_t n : {0, 1, 255, 256, 257, 262143, 262145, 16777219}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::vector<float> values = RandomFloats(n, 40 + static_cast<uint32_t>(n % 1000), 1e-2f);
    const Tensor gpu = GpuTensor(values);
    const double cpu_sum = cpu::SumOfSquaresRange(values.data(), n);
    const double gpu_sum = SumOfSquares(gpu);
    const double relative = 2.0 * static_cast<double>(std::max<int64_t>(n - 1, 0)) *
                            std::ldexp(1.0, -53);
    const double bound = relative * cpu_sum;
    EXPECT_LE(std::fabs(gpu_sum - cpu_sum), bound) << "gpu " << gpu_sum << ", cpu " << cpu_sum;
    EXPECT_EQ(SumOfSquares(gpu), gpu_sum) << "the reduction is not deterministic";
    // The square root halves the sum's relative error and adds one double rounding.
    const double norm = std::sqrt(cpu_sum);
    EXPECT_NEAR(optim::GlobalL2Norm(gpu), norm, norm * (relative + std::ldexp(1.0, -51)))
        << "through optim::GlobalL2Norm";
  }
}

TEST_F(CudaOptimTest, SumOfSquaresPropagatesInfAndNan) {
  std::vector<float> values = RandomFloats(300000, 50, 1.0f);
  values[299999] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(SumOfSquares(GpuTensor(values)), std::numeric_limits<double>::infinity());
  values[12345] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(SumOfSquares(GpuTensor(values))));
}

TEST_F(CudaOptimTest, ClipGradNormMatchesCpu) {
  const std::vector<float> values = RandomFloats(1000003, 60, 1.0f);
  Tensor cpu = CpuTensor(values);
  Tensor gpu = GpuTensor(values);
  const double norm = optim::GlobalL2Norm(cpu);
  ASSERT_LT(optim::ClipCoefficient(norm, 1.0), 1.0f);  // clipping must actually happen
  optim::ClipGradNorm(cpu, norm, 1.0);
  optim::ClipGradNorm(gpu, norm, 1.0);
  ExpectWithinUlps("clipped gradients", gpu.ToFloatVector(), cpu.ToFloatVector(), 0);
}

}  // namespace
}  // namespace xlmr::kernels::cuda
