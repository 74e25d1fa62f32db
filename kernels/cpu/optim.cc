#include "kernels/cpu/optim.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/cpu/float_access.h"
#include "kernels/cpu/instruction_set.h"
#include "kernels/cpu/lane_sums.h"
#include "kernels/cpu/parallel.h"

// This file is compiled with -ffp-contract=off (see BUILD): torch rounds every product and sum
// of AdamW separately except where it calls a fused multiply-add, so the compiler must not fuse
// others (p * decay_factor + update would otherwise become one fma on FMA-capable targets).

namespace xlmr::kernels::cpu {
namespace {

// Elements per part of an element-wise pass on the CPU threads: every element's result is its
// own (and the finite flag an AND), so the split cannot change any bit.
constexpr int64_t kElementsPerTask = 1 << 15;

// Elements per block of the sum of squares: part of its documented order (optim.h), so that
// the result depends on n alone, never on the thread count.
constexpr int64_t kSumOfSquaresBlock = 1 << 15;

// 1 when a float is infinite or NaN (its exponent bits all ones), else 0. Testing the bits
// keeps the loops branch-free (and immune to -ffast-math's isfinite folding), and OR-ing the
// results into an integer lets them vectorise (a bool &= does not).
inline uint32_t NonFiniteBit(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return (bits & 0x7f800000u) == 0x7f800000u;
}

// Vectorised (BUILD: -fvect-cost-model=dynamic) and built per instruction set; multiplying and
// testing bits are exact in all of them.
XLMR_INSTRUCTION_SET_CLONES
bool UnscaleAndCheckFiniteBlock(float* grads, int64_t n, float inv_scale) {
  uint32_t non_finite = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float value = grads[i];
    non_finite |= NonFiniteBit(value);
    grads[i] = value * inv_scale;
  }
  return non_finite == 0;
}

XLMR_INSTRUCTION_SET_CLONES
bool AllFiniteBlock(const float* values, int64_t n) {
  uint32_t non_finite = 0;
  for (int64_t i = 0; i < n; ++i) non_finite |= NonFiniteBit(values[i]);
  return non_finite == 0;
}

// block(begin, end) -> bool over [0, n) on the CPU threads; true when every call was.
template <typename Block>
bool AllBlocksTrue(int64_t n, const Block& block) {
  std::atomic<bool> all_true{true};
  ParallelFor(n, kElementsPerTask, [&](int64_t begin, int64_t end) {
    if (!block(begin, end)) all_true.store(false, std::memory_order_relaxed);
  });
  return all_true.load(std::memory_order_relaxed);
}

XLMR_INSTRUCTION_SET_CLONES
void ScaleBlock(float* values, int64_t n, float factor) {
  for (int64_t i = 0; i < n; ++i) values[i] *= factor;
}

// The sum of squares of values[i] * inv_scale (each product rounded to float; inv_scale 1: the
// values) in lane_sums.h's lane order, and in the same read whether every value was finite. The
// square of a float is exact in double, so the compiler's choice between fma and
// multiply-then-add (and so the instruction-set clone) cannot change a bit.
XLMR_INSTRUCTION_SET_CLONES
double BlockFlagAndSumOfSquares(const float* values, int64_t n, float inv_scale, uint32_t* non_finite_out) {
  double lanes[kSumLanes] = {};
  uint32_t non_finite = 0;
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes) {
    for (int64_t lane = 0; lane < kSumLanes; ++lane) {
      const float raw = values[i + lane];
      non_finite |= NonFiniteBit(raw);
      const double value = raw * inv_scale;
      lanes[lane] += value * value;
    }
  }
  for (int64_t lane = 0; i < n; ++i, ++lane) {
    const float raw = values[i];
    non_finite |= NonFiniteBit(raw);
    const double value = raw * inv_scale;
    lanes[lane] += value * value;
  }
  *non_finite_out = non_finite;
  return CombineLanes(lanes);
}

// AdamW's constants for one update, as AdamWUpdateRange derives them from the scalars.
struct AdamWConstants {
  float decay_factor, lerp_factor, beta2, one_minus_beta2, bias_correction2_sqrt, eps, neg_step_size;
  bool lerp_from_self;
};

AdamWConstants ConstantsOf(const AdamWStepScalars& scalars, bool decay) {
  // Multiplying by exactly 1.0f leaves every float unchanged, so undecayed ranges take the
  // same loop as torch's skipped p.mul_().
  // exp_avg.lerp_(grad, weight): torch's lerp for a scalar weight (ATen Lerp.h) picks its
  // formula by |weight| < 0.5, and both the vectorized CPU code and the CUDA code evaluate it as
  // one fused multiply-add: weight * (end - self) + self, or (weight - 1) * (end - self) + end.
  const bool lerp_from_self = std::fabs(scalars.lerp_weight) < 0.5f;
  return {decay ? scalars.decay_factor : 1.0f,
          lerp_from_self ? scalars.lerp_weight : scalars.lerp_weight - 1.0f,
          scalars.beta2,
          scalars.one_minus_beta2,
          scalars.bias_correction2_sqrt,
          scalars.eps,
          scalars.neg_step_size,
          lerp_from_self};
}

// One element of framework/optim/adamw.h's update with gradient g.
inline __attribute__((always_inline)) void AdamWElement(const AdamWConstants& c, float g, float& param,
                                                        float& exp_avg, float& exp_avg_sq) {
  const float m_old = exp_avg;
  const float m = std::fma(c.lerp_factor, g - m_old, c.lerp_from_self ? m_old : g);
  const float v = std::fma(c.one_minus_beta2 * g, g, exp_avg_sq * c.beta2);
  const float denom = std::sqrt(v) / c.bias_correction2_sqrt + c.eps;
  const float decayed = param * c.decay_factor;
  param = decayed + (c.neg_step_size * m) / denom;
  exp_avg = m;
  exp_avg_sq = v;
}

// AdamWUpdateRange on (grad * inv_scale) * clip, each product rounded, then grad = 0.
XLMR_INSTRUCTION_SET_CLONES
void AdamWUpdateFromRawRange(const AdamWStepScalars& scalars, bool decay, float inv_scale, float clip,
                             float* __restrict param, float* __restrict grad, float* __restrict exp_avg,
                             float* __restrict exp_avg_sq, int64_t n) {
  const AdamWConstants c = ConstantsOf(scalars, decay);
  for (int64_t i = 0; i < n; ++i) {
    const float unscaled = grad[i] * inv_scale;
    AdamWElement(c, unscaled * clip, param[i], exp_avg[i], exp_avg_sq[i]);
    grad[i] = 0.0f;
  }
}

}  // namespace

// Built three times, picked at load time: for CPUs with AVX-512 (x86-64-v4), for CPUs with AVX2
// and FMA, and for any x86-64. The loop vectorises (BUILD: -fvect-cost-model=dynamic; sqrt
// without errno) and std::fma becomes one instruction instead of a libm call per element.
// fma, sqrt, division, products and sums are correctly rounded in every instruction set, so all
// three give the same bits.
XLMR_INSTRUCTION_SET_CLONES
void AdamWUpdateRange(const AdamWStepScalars& scalars, bool decay, float* __restrict param,
                      const float* __restrict grad, float* __restrict exp_avg,
                      float* __restrict exp_avg_sq, int64_t n) {
  const AdamWConstants c = ConstantsOf(scalars, decay);
  for (int64_t i = 0; i < n; ++i) AdamWElement(c, grad[i], param[i], exp_avg[i], exp_avg_sq[i]);
}

bool UnscaleAndCheckFiniteRange(float* grads, int64_t n, float inv_scale) {
  return AllBlocksTrue(n, [&](int64_t begin, int64_t end) {
    return UnscaleAndCheckFiniteBlock(grads + begin, end - begin, inv_scale);
  });
}

bool AllFiniteRange(const float* values, int64_t n) {
  return AllBlocksTrue(
      n, [&](int64_t begin, int64_t end) { return AllFiniteBlock(values + begin, end - begin); });
}

double SumOfSquaresRange(const float* values, int64_t n) {
  return FlagAndSumOfSquaresRange(values, n, 1.0f).sum_of_squares;  // x * 1.0f is x
}

void AdamWStep(const AdamWStepScalars& scalars, const std::vector<AdamWDecayRun>& runs,
               Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
               Tensor* half_param, int64_t half_first) {
  float* p = param.data<float>();
  const float* g = grad.data<float>();
  float* m = exp_avg.data<float>();
  float* v = exp_avg_sq.data<float>();
  // Every element's update reads only its own parameter, gradient and moments, so splitting a
  // run over threads changes nothing in the result.
  for (const AdamWDecayRun& run : runs) {
    ParallelFor(run.size, kElementsPerTask, [&](int64_t begin, int64_t end) {
      const int64_t at = run.offset + begin;
      AdamWUpdateRange(scalars, run.decay, p + at, g + at, m + at, v + at, end - begin);
      if (half_param != nullptr && run.half_copy) StoreFloats(p + at, at - half_first, end - begin, half_param);
    });
  }
}

FiniteAndSumOfSquares FlagAndSumOfSquaresRange(const float* grads, int64_t n, float inv_scale) {
  const int64_t blocks = (n + kSumOfSquaresBlock - 1) / kSumOfSquaresBlock;
  std::vector<double> block_sums(static_cast<size_t>(blocks));
  std::vector<uint32_t> block_non_finite(static_cast<size_t>(blocks));
  ParallelFor(blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) {
      const int64_t first = block * kSumOfSquaresBlock;
      block_sums[block] = BlockFlagAndSumOfSquares(grads + first, std::min(kSumOfSquaresBlock, n - first),
                                                   inv_scale, &block_non_finite[block]);
    }
  });
  FiniteAndSumOfSquares result{true, 0.0};
  for (int64_t block = 0; block < blocks; ++block) {
    result.sum_of_squares += block_sums[block];
    if (block_non_finite[block] != 0) result.finite = false;
  }
  return result;
}

void AdamWStepFromRawGradients(const AdamWStepScalars& scalars, const std::vector<AdamWDecayRun>& runs,
                               float inv_scale, float clip, Tensor& param, Tensor& grad, Tensor& exp_avg,
                               Tensor& exp_avg_sq, Tensor* half_param, int64_t half_first) {
  float* p = param.data<float>();
  float* g = grad.data<float>();
  float* m = exp_avg.data<float>();
  float* v = exp_avg_sq.data<float>();
  for (const AdamWDecayRun& run : runs) {
    ParallelFor(run.size, kElementsPerTask, [&](int64_t begin, int64_t end) {
      const int64_t at = run.offset + begin;
      AdamWUpdateFromRawRange(scalars, run.decay, inv_scale, clip, p + at, g + at, m + at, v + at, end - begin);
      if (half_param != nullptr && run.half_copy) StoreFloats(p + at, at - half_first, end - begin, half_param);
    });
  }
}

void ClearRange(float* values, int64_t n) {
  ParallelFor(n, kElementsPerTask, [&](int64_t begin, int64_t end) {
    std::memset(values + begin, 0, sizeof(float) * static_cast<size_t>(end - begin));
  });
}

void ScaleRange(float* values, int64_t n, float factor) {
  ParallelFor(n, kElementsPerTask, [&](int64_t begin, int64_t end) {
    ScaleBlock(values + begin, end - begin, factor);
  });
}

}  // namespace xlmr::kernels::cpu
