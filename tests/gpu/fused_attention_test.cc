// ops::FusedAttention / ops::FusedAttentionBackward on CUDA tensors (kernels/cuda/fused_attention.h)
// against the CPU kernel (kernels/cpu/fused_attention.cc) on the same inputs, through the op
// layer.
//
// Tolerances (tests/testing/attention_cases.h, GpuFusedAttentionTolerances): every result
// against the CPU's by its largest error (relative to the tensor's largest magnitude: an
// indexing, tiling, masking or dropout-mask error changes elements by O(1) of the largest one),
// the logsumexp by its own bound, and under f16 by the mean error too (a missing rounding moves
// most elements, a change of summation order a few). Each bound is tied to a CPU measurement of
// the same cases (tests/framework/ops/attention_rounding_test.cc fails when they drift).
// dq and dk are measured against max(their own largest element, dv's largest): where every row
// has one key (S = 1) P = 1 and they are exactly zero in exact arithmetic, and what both sides
// return is the rounding noise of dP - D (two fp32 sums of the same products dO_i . v_j in
// different orders), so their own largest element is that noise and a relative check would
// compare noise with noise (an emulation of plausible GPU summation orders failed it every
// time). That noise is a rounding of products of dO's and v's scale, the scale of dv = P^T dO;
// wherever attention is not degenerate dq, dk and dv are of the same order (random inputs:
// all ~0.1), so the floor loosens no other case by much.
// Outputs that a kernel never writes are NaN (the GPU test setup poisons fresh memory).
// Cases (FusedAttentionCases): S = 1, 64, 129, 130 left-padded (a row whose whole first key tile
// is padding: the running max starts at the padding bias and the first real tile must rescale
// that tile away), 512, 1030; dropout off and p = 0.1. The dropout pattern is also checked element by element
// (DropoutMaskIsTheCpuMaskExactly), and the backward for bit-identical reruns (no atomics).
// Packed (varlen) batches, ops::VarlenFusedAttention (VarlenAttentionCases: mixed lengths
// including 1 and the longest, 1030; one sequence only; 64 sequences; 12 heads), the same
// kernels narrowed to each sequence: forward and backward against the CPU with the same bounds,
// the dropout mask element by element with a fixed stride, reruns bit for bit. f32, f16 and bf16
// (f16 and bf16 are one kernel template; each has its own bounds).
// Skipped (with the reason) when no GPU is visible, e.g. on the build machine.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/ops/fused_attention.h"
#include "framework/ops/varlen_fused_attention.h"
#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/testing/attention_cases.h"

namespace xlmr {
namespace {

using testing::AttentionInputs;
using testing::ExpectBitEqual;
using testing::ExpectCloseToLargest;
using testing::ExpectMeanCloseToLargest;
using testing::FusedAttentionCase;
using testing::FusedAttentionCaseInputs;
using testing::FusedAttentionCases;
using testing::LargestMagnitude;
using testing::OnGpu;
using testing::RandomTensor;
using testing::VarlenAttentionCase;
using testing::VarlenAttentionCaseInputs;
using testing::VarlenAttentionCases;

constexpr int64_t kHeadDim = 64;
constexpr const DropoutKey& kKey = testing::kFusedAttentionCaseKey;

class CudaFusedAttentionTest : public testing::GpuTest {};

std::string Describe(const FusedAttentionCase& c, DType dtype, float p) {
  return c.Name() + " " + DTypeName(dtype) + " p=" + std::to_string(p);
}

// The max bound, and under f16 the mean bound (the header's note).
void ExpectClose(const std::string& what, const Tensor& gpu, const Tensor& cpu, DType dtype,
                 double scale_floor = 0.0) {
  const testing::FusedAttentionTolerances t = testing::GpuFusedAttentionTolerances(dtype);
  ExpectCloseToLargest(what, gpu, cpu, t.max, scale_floor);
  if (t.mean > 0) ExpectMeanCloseToLargest(what, gpu, cpu, t.mean, scale_floor);
}

// dq and dk against max(their largest, dv's largest); dv against its own (the header's note).
void ExpectGradientsClose(const std::string& what, const ops::AttentionGrads& gpu,
                          const ops::AttentionGrads& cpu, DType dtype) {
  const double dv_scale = LargestMagnitude(cpu.dv);
  ExpectClose(what + " dq", gpu.dq, cpu.dq, dtype, dv_scale);
  ExpectClose(what + " dk", gpu.dk, cpu.dk, dtype, dv_scale);
  ExpectClose(what + " dv", gpu.dv, cpu.dv, dtype);
}

ops::FusedAttentionOutput GpuForward(const AttentionInputs& in, const FusedAttentionCase& c, float p) {
  return ops::FusedAttention(OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), OnGpu(in.key_mask), c.heads,
                             p, kKey);
}

TEST_F(CudaFusedAttentionTest, ForwardMatchesCpu) {
  for (const FusedAttentionCase& c : FusedAttentionCases()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (float p : {0.0f, 0.1f}) {
        const std::string what = Describe(c, dtype, p);
        const AttentionInputs in = FusedAttentionCaseInputs(c, dtype);
        const ops::FusedAttentionOutput cpu =
            ops::FusedAttention(in.q, in.k, in.v, in.key_mask, c.heads, p, kKey);
        const ops::FusedAttentionOutput gpu = GpuForward(in, c, p);
        ExpectClose(what + " context", gpu.context, cpu.context, dtype);
        ExpectCloseToLargest(what + " logsumexp", gpu.logsumexp, cpu.logsumexp,
                             testing::GpuFusedAttentionTolerances(dtype).lse);
      }
    }
  }
}

TEST_F(CudaFusedAttentionTest, BackwardMatchesCpu) {
  for (const FusedAttentionCase& c : FusedAttentionCases()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (float p : {0.0f, 0.1f}) {
        const std::string what = Describe(c, dtype, p);
        const AttentionInputs in = FusedAttentionCaseInputs(c, dtype);
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
        ExpectGradientsClose(what, gpu, cpu, dtype);
      }
    }
  }
}

// The GPU forward followed by the GPU backward (what training runs), against the CPU pair.
TEST_F(CudaFusedAttentionTest, ForwardThenBackwardMatchesCpu) {
  const FusedAttentionCase c{3, 129, 3, {129, 70, 0}};
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    const float p = 0.1f;
    const std::string what = Describe(c, dtype, p);
    const AttentionInputs in = FusedAttentionCaseInputs(c, dtype);
    const ops::FusedAttentionOutput cpu_fwd =
        ops::FusedAttention(in.q, in.k, in.v, in.key_mask, c.heads, p, kKey);
    const ops::AttentionGrads cpu =
        ops::FusedAttentionBackward(in.d_context, in.q, in.k, in.v, cpu_fwd.context,
                                    cpu_fwd.logsumexp, in.key_mask, c.heads, p, kKey);
    const ops::FusedAttentionOutput gpu_fwd = GpuForward(in, c, p);
    const ops::AttentionGrads gpu = ops::FusedAttentionBackward(
        OnGpu(in.d_context), OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), gpu_fwd.context,
        gpu_fwd.logsumexp, OnGpu(in.key_mask), c.heads, p, kKey);
    ExpectGradientsClose(what, gpu, cpu, dtype);
  }
}

// Every output element has one writer and every sum a fixed order (no atomics): two runs give
// the same bits, forward and backward.
TEST_F(CudaFusedAttentionTest, ResultsAreTheSameRunToRun) {
  const FusedAttentionCase c{2, 1030, 2, {1030, 1000}};
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    const std::string what = Describe(c, dtype, 0.1f);
    const AttentionInputs in = FusedAttentionCaseInputs(c, dtype);
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
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
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
    const Tensor mask = testing::FusedAttentionCaseKeyMask({batch, seq, static_cast<int>(heads), {seq, seq, seq}});
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
    ExpectClose(std::string(DTypeName(dtype)) + " dropped probabilities", gpu, cpu, dtype);
  }
}

// The padded kernels with a fixed dropout stride longer than S (what a padding-free trainer's
// padded runs pass): forward and backward against the CPU with the same stride.
TEST_F(CudaFusedAttentionTest, FixedDropoutStrideMatchesCpu) {
  for (const FusedAttentionCase& c : FusedAttentionCases()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      const float p = 0.1f;
      const int64_t stride = c.seq + 13;
      const std::string what = Describe(c, dtype, p) + " stride " + std::to_string(stride);
      const AttentionInputs in = FusedAttentionCaseInputs(c, dtype);
      const ops::FusedAttentionOutput cpu =
          ops::FusedAttention(in.q, in.k, in.v, in.key_mask, c.heads, p, kKey, stride);
      const ops::FusedAttentionOutput gpu = ops::FusedAttention(
          OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), OnGpu(in.key_mask), c.heads, p, kKey, stride);
      ExpectClose(what + " context", gpu.context, cpu.context, dtype);
      const ops::AttentionGrads cpu_grads =
          ops::FusedAttentionBackward(in.d_context, in.q, in.k, in.v, cpu.context, cpu.logsumexp,
                                      in.key_mask, c.heads, p, kKey, stride);
      const ops::AttentionGrads gpu_grads = ops::FusedAttentionBackward(
          OnGpu(in.d_context), OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), OnGpu(cpu.context),
          OnGpu(cpu.logsumexp), OnGpu(in.key_mask), c.heads, p, kKey, stride);
      ExpectGradientsClose(what, gpu_grads, cpu_grads, dtype);
    }
  }
}

// ---- Packed (varlen) batches ----

std::string Describe(const VarlenAttentionCase& c, DType dtype, float p) {
  return c.Name() + " " + DTypeName(dtype) + " p=" + std::to_string(p);
}

ops::FusedAttentionOutput VarlenForward(const AttentionInputs& in, const VarlenAttentionCase& c,
                                        float p, bool gpu) {
  if (!gpu) {
    return ops::VarlenFusedAttention(in.q, in.k, in.v, in.cu_seqlens, c.max_length(), c.heads, p,
                                     kKey, c.dropout_stride);
  }
  return ops::VarlenFusedAttention(OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), in.cu_seqlens,
                                   c.max_length(), c.heads, p, kKey, c.dropout_stride);
}

ops::AttentionGrads VarlenBackward(const AttentionInputs& in, const VarlenAttentionCase& c,
                                   const ops::FusedAttentionOutput& fwd, float p, bool gpu) {
  if (!gpu) {
    return ops::VarlenFusedAttentionBackward(in.d_context, in.q, in.k, in.v, fwd.context,
                                             fwd.logsumexp, in.cu_seqlens, c.max_length(),
                                             c.heads, p, kKey, c.dropout_stride);
  }
  return ops::VarlenFusedAttentionBackward(
      OnGpu(in.d_context), OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), OnGpu(fwd.context),
      OnGpu(fwd.logsumexp), in.cu_seqlens, c.max_length(), c.heads, p, kKey, c.dropout_stride);
}

TEST_F(CudaFusedAttentionTest, VarlenForwardMatchesCpu) {
  for (const VarlenAttentionCase& c : VarlenAttentionCases()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (float p : {0.0f, 0.1f}) {
        const std::string what = Describe(c, dtype, p);
        const AttentionInputs in = VarlenAttentionCaseInputs(c, dtype);
        const ops::FusedAttentionOutput cpu = VarlenForward(in, c, p, /*gpu=*/false);
        const ops::FusedAttentionOutput gpu = VarlenForward(in, c, p, /*gpu=*/true);
        ExpectClose(what + " context", gpu.context, cpu.context, dtype);
        ExpectCloseToLargest(what + " logsumexp", gpu.logsumexp, cpu.logsumexp,
                             testing::GpuFusedAttentionTolerances(dtype).lse);
      }
    }
  }
}

TEST_F(CudaFusedAttentionTest, VarlenBackwardMatchesCpu) {
  for (const VarlenAttentionCase& c : VarlenAttentionCases()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (float p : {0.0f, 0.1f}) {
        const std::string what = Describe(c, dtype, p);
        const AttentionInputs in = VarlenAttentionCaseInputs(c, dtype);
        // Both backwards get the CPU forward's context and logsumexp.
        const ops::FusedAttentionOutput fwd = VarlenForward(in, c, p, /*gpu=*/false);
        ExpectGradientsClose(what, VarlenBackward(in, c, fwd, p, /*gpu=*/true),
                             VarlenBackward(in, c, fwd, p, /*gpu=*/false), dtype);
      }
    }
  }
}

// The GPU forward then the GPU backward (what training runs) against the CPU pair, and a rerun
// of both bit for bit; the rerun is given cu_seqlens already on the GPU, as the model's token
// layout gives it (one upload for every layer), the first run lets the op upload it.
TEST_F(CudaFusedAttentionTest, VarlenForwardThenBackwardMatchesCpuAndReruns) {
  const VarlenAttentionCase& c = VarlenAttentionCases().front();  // 1 ... 1030
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    const float p = 0.1f;
    const std::string what = Describe(c, dtype, p);
    const AttentionInputs in = VarlenAttentionCaseInputs(c, dtype);
    const ops::FusedAttentionOutput cpu_fwd = VarlenForward(in, c, p, /*gpu=*/false);
    const ops::AttentionGrads cpu = VarlenBackward(in, c, cpu_fwd, p, /*gpu=*/false);
    const Tensor q = OnGpu(in.q), k = OnGpu(in.k), v = OnGpu(in.v), dy = OnGpu(in.d_context);
    ops::FusedAttentionOutput gpu_fwd[2];
    ops::AttentionGrads gpu[2];
    const Tensor cu_seqlens_on_gpu = OnGpu(in.cu_seqlens);
    for (int run = 0; run < 2; ++run) {
      const Tensor given = run == 0 ? Tensor() : cu_seqlens_on_gpu;
      gpu_fwd[run] = ops::VarlenFusedAttention(q, k, v, in.cu_seqlens, c.max_length(), c.heads, p,
                                               kKey, c.dropout_stride, given);
      gpu[run] = ops::VarlenFusedAttentionBackward(dy, q, k, v, gpu_fwd[run].context,
                                                   gpu_fwd[run].logsumexp, in.cu_seqlens,
                                                   c.max_length(), c.heads, p, kKey,
                                                   c.dropout_stride, given);
    }
    ExpectClose(what + " context", gpu_fwd[0].context, cpu_fwd.context, dtype);
    ExpectGradientsClose(what, gpu[0], cpu, dtype);
    ExpectBitEqual(what + " rerun context", gpu_fwd[1].context, gpu_fwd[0].context);
    ExpectBitEqual(what + " rerun logsumexp", gpu_fwd[1].logsumexp, gpu_fwd[0].logsumexp);
    ExpectBitEqual(what + " rerun dq", gpu[1].dq, gpu[0].dq);
    ExpectBitEqual(what + " rerun dk", gpu[1].dk, gpu[0].dk);
    ExpectBitEqual(what + " rerun dv", gpu[1].dv, gpu[0].dv);
  }
}

// As DropoutMaskIsTheCpuMaskExactly, packed: sequences of 61, 1, 64, 17 tokens (v = identity on
// each sequence's first n of 64 columns), stride 70, so every mask row starts at its own index
// and most rows inside a Philox block. The context's zero pattern is the mask: no tolerance.
TEST_F(CudaFusedAttentionTest, VarlenDropoutMaskIsTheCpuMaskExactly) {
  const VarlenAttentionCase c{{61, 1, 64, 17}, 2, kHeadDim, 70};
  const int64_t hidden = c.hidden();
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    AttentionInputs in = VarlenAttentionCaseInputs(c, dtype);
    std::vector<float> identity(static_cast<size_t>(c.tokens() * hidden), 0.0f);
    int64_t first = 0;
    for (int64_t n : c.lengths) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t h = 0; h < c.heads; ++h) identity[(first + j) * hidden + h * kHeadDim + j] = 1;
      }
      first += n;
    }
    in.v.CopyFromFloats(identity);
    const float p = 0.5f;
    const std::vector<float> cpu = VarlenForward(in, c, p, false).context.ToFloatVector();
    const std::vector<float> gpu = VarlenForward(in, c, p, true).context.ToFloatVector();
    int64_t elements = 0, dropped = 0, pattern_mismatches = 0;
    first = 0;
    for (int64_t n : c.lengths) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t h = 0; h < c.heads; ++h) {
          for (int64_t j = 0; j < n; ++j) {
            const size_t at = static_cast<size_t>((first + i) * hidden + h * kHeadDim + j);
            ++elements;
            dropped += cpu[at] == 0.0f;
            pattern_mismatches += (cpu[at] == 0.0f) != (gpu[at] == 0.0f);
          }
        }
      }
      first += n;
    }
    EXPECT_EQ(pattern_mismatches, 0) << DTypeName(dtype) << ": of " << elements << " mask elements";
    EXPECT_GT(dropped, elements / 4) << "p = 0.5 should drop about half";
  }
}

}  // namespace
}  // namespace xlmr
