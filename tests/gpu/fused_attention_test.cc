// ops::FusedAttention / ops::FusedAttentionBackward on CUDA tensors (kernels/cuda/fused_attention.h)
// against the CPU kernel (kernels/cpu/fused_attention.cc) on the same inputs, through the op
// layer.
//
// Tolerances: error = max_i |gpu_i - cpu_i| / max_i |cpu_i| (relative to the tensor's largest
// magnitude, so tiny values do not dominate), per dtype:
//   dtype  context, logsumexp   dq, dk, dv   why
//   f32    1e-5                 5e-5         Both sides follow the contract step by step; what
//                                            differs is the order of the fp32 sums (dot products,
//                                            tile sums, the P V and dS K products: ~1e-6 relative
//                                            for sums of <= 1030 terms) and expf vs std::exp
//                                            (<= 2 ulps). The backward's dP - D cancels, so its
//                                            errors are a few times larger relative to the result.
//   f16    2e-3 (lse: 1e-5)     5e-3         The f16 roundings sit at the same places on both sides
//                                            (contract), so the fp32 values before each rounding
//                                            differ only as in f32; a rounding may then land on
//                                            the neighbouring half (2^-11 ~ 4.9e-4 relative):
//                                            4 ulps of the largest element for the context, ~10 for
//                                            gradients, whose dt(dS) and dt(P) roundings add up.
//                                            The logsumexp is fp32 from exact f16 products.
// dq and dk are measured against max(their own largest element, dv's largest): where every row
// has one key (S = 1) P = 1 and they are exactly zero in exact arithmetic, and what both sides
// return is the rounding noise of dP - D (two fp32 sums of the same products dO_i . v_j in
// different orders), so their own largest element is that noise and a relative check would
// compare noise with noise (an emulation of plausible GPU summation orders failed it every
// time). That noise is a rounding of products of dO's and v's scale, the scale of dv = P^T dO;
// wherever attention is not degenerate dq, dk and dv are of the same order (random inputs:
// all ~0.1), so the floor loosens no other case by much.
// An indexing, tiling, masking or dropout-mask error changes elements by O(1) of the largest one;
// outputs that a kernel never writes are NaN (the GPU test setup poisons fresh memory).
// Cases: S = 1, 64, 129 (a partial last tile), 130 left-padded (a row whose whole first key tile
// is padding: the running max starts at the padding bias and the first real tile must rescale
// that tile away), 512, 1030 (not a multiple of 4: rows start inside Philox blocks); right
// padding with one sequence fully padded; several (batch, head) pairs; dropout off and p = 0.1. The dropout pattern is also checked element by element
// (DropoutMaskIsTheCpuMaskExactly), and the backward for bit-identical reruns (no atomics).
// Skipped (with the reason) when no GPU is visible, e.g. on the build machine.
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "framework/ops/fused_attention.h"
#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using testing::ExpectBitEqual;
using testing::ExpectCloseToLargest;
using testing::LargestMagnitude;
using testing::OnGpu;
using testing::RandomTensor;

constexpr int64_t kHeadDim = 64;

struct Case {
  int64_t batch, seq;
  int heads;
  std::vector<int64_t> lengths;  // real tokens of each sequence (0: all padding)
  bool left_padded = false;      // real tokens last (padding_side="left"), else first
  int64_t hidden() const { return heads * kHeadDim; }
  bool IsReal(int64_t b, int64_t j) const {
    return left_padded ? j >= seq - lengths[b] : j < lengths[b];
  }
  std::string Name() const {
    std::ostringstream name;
    name << "B=" << batch << " S=" << seq << " heads=" << heads << " lengths";
    for (int64_t length : lengths) name << " " << length;
    if (left_padded) name << " left-padded";
    return name.str();
  }
};

const Case kCases[] = {
    {2, 1, 2, {1, 1}},
    {4, 64, 2, {64, 1, 33, 64}},          // exactly one tile; a one-token sequence
    {3, 129, 3, {129, 70, 0}},            // partial last tile; a sequence without real tokens
    {2, 130, 2, {60, 130}, true},         // left padding: row 0's first key tile all padding
    {2, 512, 12, {512, 300}},             // XLM-R base: 12 heads of 64
    {2, 1030, 2, {1030, 1000}},           // 17 tiles, the last of 6 keys
};

struct Tolerances {
  double context, logsumexp, grads;
};
Tolerances TolerancesFor(DType dtype) {
  return dtype == DType::kF16 ? Tolerances{2e-3, 1e-5, 5e-3} : Tolerances{1e-5, 1e-5, 5e-5};
}

class CudaFusedAttentionTest : public testing::GpuTest {};

Tensor KeyMaskCpu(const Case& c) {
  Tensor mask = Tensor::Zeros({c.batch, c.seq}, DType::kI32);
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t j = 0; j < c.seq; ++j) mask.data<int32_t>()[b * c.seq + j] = c.IsReal(b, j);
  }
  return mask;
}

struct Inputs {
  Tensor q, k, v, key_mask, d_context;
};

// N(0, 1) inputs (f16: rounded once, both backends see the same values): scores q.k / 8 of
// spread ~1, so softmax rows are neither flat nor one-hot.
Inputs MakeInputs(const Case& c, DType dtype) {
  const Shape shape = {c.batch, c.seq, c.hidden()};
  return {RandomTensor(shape, dtype, 11), RandomTensor(shape, dtype, 12),
          RandomTensor(shape, dtype, 13), KeyMaskCpu(c), RandomTensor(shape, dtype, 14)};
}

const DropoutKey kKey{/*seed=*/987654321987ull, /*step=*/5, /*micro_step=*/2, /*layer=*/7,
                      /*op=*/2};

std::string Describe(const Case& c, DType dtype, float p) {
  return c.Name() + " " + DTypeName(dtype) + " p=" + std::to_string(p);
}

// dq and dk against max(their largest, dv's largest); dv against its own (the header's note).
void ExpectGradientsClose(const std::string& what, const ops::AttentionGrads& gpu,
                          const ops::AttentionGrads& cpu, double tolerance) {
  const double dv_scale = LargestMagnitude(cpu.dv);
  ExpectCloseToLargest(what + " dq", gpu.dq, cpu.dq, tolerance, dv_scale);
  ExpectCloseToLargest(what + " dk", gpu.dk, cpu.dk, tolerance, dv_scale);
  ExpectCloseToLargest(what + " dv", gpu.dv, cpu.dv, tolerance);
}

ops::FusedAttentionOutput GpuForward(const Inputs& in, const Case& c, float p) {
  return ops::FusedAttention(OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), OnGpu(in.key_mask), c.heads,
                             p, kKey);
}

TEST_F(CudaFusedAttentionTest, ForwardMatchesCpu) {
  for (const Case& c : kCases) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      for (float p : {0.0f, 0.1f}) {
        const std::string what = Describe(c, dtype, p);
        const Inputs in = MakeInputs(c, dtype);
        const ops::FusedAttentionOutput cpu =
            ops::FusedAttention(in.q, in.k, in.v, in.key_mask, c.heads, p, kKey);
        const ops::FusedAttentionOutput gpu = GpuForward(in, c, p);
        const Tolerances tol = TolerancesFor(dtype);
        ExpectCloseToLargest(what + " context", gpu.context, cpu.context, tol.context);
        ExpectCloseToLargest(what + " logsumexp", gpu.logsumexp, cpu.logsumexp, tol.logsumexp);
      }
    }
  }
}

TEST_F(CudaFusedAttentionTest, BackwardMatchesCpu) {
  for (const Case& c : kCases) {
    for (DType dtype : {DType::kF32, DType::kF16}) {
      for (float p : {0.0f, 0.1f}) {
        const std::string what = Describe(c, dtype, p);
        const Inputs in = MakeInputs(c, dtype);
        // Both backwards get the CPU forward's context and logsumexp, so only the backward is
        // compared.
        const ops::FusedAttentionOutput fwd =
            ops::FusedAttention(in.q, in.k, in.v, in.key_mask, c.heads, p, kKey);
        const ops::AttentionGrads cpu =
            ops::FusedAttentionBackward(in.d_context, in.q, in.k, in.v, fwd.context,
                                        fwd.logsumexp, in.key_mask, c.heads, p, kKey);
        const ops::AttentionGrads gpu = ops::FusedAttentionBackward(
            OnGpu(in.d_context), OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), OnGpu(fwd.context),
            OnGpu(fwd.logsumexp), OnGpu(in.key_mask), c.heads, p, kKey);
        ExpectGradientsClose(what, gpu, cpu, TolerancesFor(dtype).grads);
      }
    }
  }
}

// The GPU forward followed by the GPU backward (what training runs), against the CPU pair.
TEST_F(CudaFusedAttentionTest, ForwardThenBackwardMatchesCpu) {
  const Case c{3, 129, 3, {129, 70, 0}};
  for (DType dtype : {DType::kF32, DType::kF16}) {
    const float p = 0.1f;
    const std::string what = Describe(c, dtype, p);
    const Inputs in = MakeInputs(c, dtype);
    const ops::FusedAttentionOutput cpu_fwd =
        ops::FusedAttention(in.q, in.k, in.v, in.key_mask, c.heads, p, kKey);
    const ops::AttentionGrads cpu =
        ops::FusedAttentionBackward(in.d_context, in.q, in.k, in.v, cpu_fwd.context,
                                    cpu_fwd.logsumexp, in.key_mask, c.heads, p, kKey);
    const ops::FusedAttentionOutput gpu_fwd = GpuForward(in, c, p);
    const ops::AttentionGrads gpu = ops::FusedAttentionBackward(
        OnGpu(in.d_context), OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), gpu_fwd.context,
        gpu_fwd.logsumexp, OnGpu(in.key_mask), c.heads, p, kKey);
    ExpectGradientsClose(what, gpu, cpu, TolerancesFor(dtype).grads);
  }
}

// Every output element has one writer and every sum a fixed order (no atomics): two runs give
// the same bits, forward and backward.
TEST_F(CudaFusedAttentionTest, ResultsAreTheSameRunToRun) {
  const Case c{2, 1030, 2, {1030, 1000}};
  for (DType dtype : {DType::kF32, DType::kF16}) {
    const std::string what = Describe(c, dtype, 0.1f);
    const Inputs in = MakeInputs(c, dtype);
    const Tensor q = OnGpu(in.q), k = OnGpu(in.k), v = OnGpu(in.v), mask = OnGpu(in.key_mask);
    const Tensor d_context = OnGpu(in.d_context);
    const ops::FusedAttentionOutput first = ops::FusedAttention(q, k, v, mask, c.heads, 0.1f, kKey);
    const ops::FusedAttentionOutput second =
        ops::FusedAttention(q, k, v, mask, c.heads, 0.1f, kKey);
    ExpectBitEqual(what + " context", second.context, first.context);
    ExpectBitEqual(what + " logsumexp", second.logsumexp, first.logsumexp);
    const ops::AttentionGrads a = ops::FusedAttentionBackward(
        d_context, q, k, v, first.context, first.logsumexp, mask, c.heads, 0.1f, kKey);
    const ops::AttentionGrads b = ops::FusedAttentionBackward(
        d_context, q, k, v, first.context, first.logsumexp, mask, c.heads, 0.1f, kKey);
    ExpectBitEqual(what + " dq", b.dq, a.dq);
    ExpectBitEqual(what + " dk", b.dk, a.dk);
    ExpectBitEqual(what + " dv", b.dv, a.dv);
  }
}

// With v_h = identity on the first S of its 64 columns (S <= 64), context_id = dt(z_id e_id) /
// l_i * scale: exactly 0 iff element (i, d) is dropped (e > 0 for every key here, since no key
// is padding and the scores are O(1)). So the context shows the mask element by element, and it
// must be the CPU's: no tolerance for the pattern. S = 61 makes most rows start inside a
// Philox block of four elements.
TEST_F(CudaFusedAttentionTest, DropoutMaskIsTheCpuMaskExactly) {
  const int64_t batch = 3, seq = 61, heads = 2, hidden = heads * kHeadDim;
  for (DType dtype : {DType::kF32, DType::kF16}) {
    const Tensor q = RandomTensor({batch, seq, hidden}, dtype, 21);
    const Tensor k = RandomTensor({batch, seq, hidden}, dtype, 22);
    std::vector<float> identity(static_cast<size_t>(batch * seq * hidden), 0.0f);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t j = 0; j < seq; ++j) {
        for (int64_t h = 0; h < heads; ++h) {
          identity[(b * seq + j) * hidden + h * kHeadDim + j] = 1.0f;
        }
      }
    }
    Tensor v = Tensor::Zeros({batch, seq, hidden}, dtype);
    v.CopyFromFloats(identity);
    const Tensor mask = KeyMaskCpu({batch, seq, static_cast<int>(heads), {seq, seq, seq}});
    const float p = 0.5f;  // many drops and many keeps
    const Tensor cpu = ops::FusedAttention(q, k, v, mask, heads, p, kKey).context;
    const Tensor gpu =
        ops::FusedAttention(OnGpu(q), OnGpu(k), OnGpu(v), OnGpu(mask), heads, p, kKey).context;
    const std::vector<float> cpu_values = cpu.ToFloatVector(), gpu_values = gpu.ToFloatVector();
    int64_t dropped = 0, pattern_mismatches = 0;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < seq; ++i) {
        for (int64_t h = 0; h < heads; ++h) {
          for (int64_t j = 0; j < seq; ++j) {
            const size_t at = static_cast<size_t>((b * seq + i) * hidden + h * kHeadDim + j);
            dropped += cpu_values[at] == 0.0f;
            pattern_mismatches += (cpu_values[at] == 0.0f) != (gpu_values[at] == 0.0f);
          }
        }
      }
    }
    EXPECT_EQ(pattern_mismatches, 0) << DTypeName(dtype) << ": of " << batch * heads * seq * seq
                                     << " mask elements";
    EXPECT_GT(dropped, batch * heads * seq * seq / 4) << "p = 0.5 should drop about half";
    ExpectCloseToLargest(std::string(DTypeName(dtype)) + " dropped probabilities", gpu, cpu,
                         TolerancesFor(dtype).context);
  }
}

}  // namespace
}  // namespace xlmr
