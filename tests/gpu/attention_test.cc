// ops::Attention / ops::AttentionBackward on CUDA tensors (kernels/cuda/attention.h) against the
// CPU backend on the same inputs.
//
// Tolerances (tests/testing/attention_cases.h, GpuAttentionTolerances): every output against
// the CPU's, by its largest error (above what a change of summation order alone does: an index,
// mask or dropout-mask error changes elements by O(1) of the largest one) and, for f16 and
// bf16, by its mean error (what catches a missing half-precision rounding, which moves most
// elements where a change of order moves a few). Both are tied to CPU measurements of the same
// cases (tests/framework/ops/attention_rounding_test.cc fails when they drift).
// The dropout mask and the padding are checked exactly (DropoutMaskIsTheCpuMaskExactly,
// PaddingKeysGetExactlyZeroProbability).
// Most cases have B > 1 and heads > 1, so a wrong head-major copy or batch stride in the CUDA
// backend's one-GEMM-per-product layout moves whole blocks of values and fails.
// Skipped (with the reason) when no GPU is visible, e.g. on the build machine.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "framework/ops/attention.h"
#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"
#include "tests/testing/attention_cases.h"

namespace xlmr {
namespace {

using testing::AttentionCase;
using testing::AttentionCaseInputs;
using testing::AttentionCaseKeyMask;
using testing::AttentionCases;
using testing::AttentionInputs;
using testing::ExpectCloseToLargest;
using testing::ExpectMeanCloseToLargest;
using testing::OnGpu;

constexpr const DropoutKey& kKey = testing::kAttentionCaseKey;

class CudaAttentionTest : public testing::GpuTest {};

// Both bounds of GpuAttentionTolerances.
void ExpectClose(const std::string& what, const Tensor& gpu, const Tensor& cpu, DType dtype) {
  const testing::AttentionTolerances t = testing::GpuAttentionTolerances(dtype);
  ExpectCloseToLargest(what, gpu, cpu, t.max);
  if (t.mean > 0) ExpectMeanCloseToLargest(what, gpu, cpu, t.mean);
}

std::string Describe(const AttentionCase& c, DType dtype, float p) {
  return c.Name() + " " + DTypeName(dtype) + " p=" + std::to_string(p);
}

TEST_F(CudaAttentionTest, ForwardMatchesCpu) {
  for (const AttentionCase& c : AttentionCases()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (float p : {0.0f, 0.1f}) {
        const std::string what = Describe(c, dtype, p);
        const AttentionInputs in = AttentionCaseInputs(c, dtype);
        const ops::AttentionOutput cpu =
            ops::Attention(in.q, in.k, in.v, in.key_mask, c.heads, p, kKey);
        const ops::AttentionOutput gpu = ops::Attention(
            OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), OnGpu(in.key_mask), c.heads, p, kKey);
        ExpectClose(what + " probs", gpu.probs, cpu.probs, dtype);
        ExpectClose(what + " context", gpu.context, cpu.context, dtype);
      }
    }
  }
}

TEST_F(CudaAttentionTest, BackwardMatchesCpu) {
  for (const AttentionCase& c : AttentionCases()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (float p : {0.0f, 0.1f}) {
        const std::string what = Describe(c, dtype, p);
        const AttentionInputs in = AttentionCaseInputs(c, dtype);
        // Both backwards get the CPU forward's probs, so only the backward is compared.
        const Tensor probs = ops::Attention(in.q, in.k, in.v, in.key_mask, c.heads, p, kKey).probs;
        const ops::AttentionGrads cpu = ops::AttentionBackward(
            in.d_context, in.q, in.k, in.v, probs, in.key_mask, c.heads, p, kKey);
        const ops::AttentionGrads gpu = ops::AttentionBackward(
            OnGpu(in.d_context), OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), OnGpu(probs),
            OnGpu(in.key_mask), c.heads, p, kKey);
        ExpectClose(what + " dq", gpu.dq, cpu.dq, dtype);
        ExpectClose(what + " dk", gpu.dk, cpu.dk, dtype);
        ExpectClose(what + " dv", gpu.dv, cpu.dv, dtype);
      }
    }
  }
}

// With head_dim == S and v_h = identity, context_h = dropped probs exactly (each output is one
// product with 1 plus exact zeros), so the context shows the mask element by element: an
// element is dropped on the GPU iff it is dropped on the CPU (tolerance: none for the pattern).
TEST_F(CudaAttentionTest, DropoutMaskIsTheCpuMaskExactly) {
  const int64_t batch = 3, seq = 9, heads = 4, hidden = seq * heads;
  for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    const AttentionCase c{batch, seq, hidden, static_cast<int>(heads), false};
    const AttentionInputs in = AttentionCaseInputs(c, dtype);
    const Tensor& q = in.q;
    const Tensor& k = in.k;
    std::vector<float> identity(static_cast<size_t>(batch * seq * hidden), 0.0f);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t j = 0; j < seq; ++j) {
        for (int64_t h = 0; h < heads; ++h) identity[(b * seq + j) * hidden + h * seq + j] = 1.0f;
      }
    }
    Tensor v = Tensor::Zeros({batch, seq, hidden}, dtype);
    v.CopyFromFloats(identity);
    const Tensor& mask = in.key_mask;
    const float p = 0.5f;  // many drops and many keeps
    const Tensor cpu = ops::Attention(q, k, v, mask, heads, p, kKey).context;
    const Tensor gpu =
        ops::Attention(OnGpu(q), OnGpu(k), OnGpu(v), OnGpu(mask), heads, p, kKey).context;
    const std::vector<float> cpu_values = cpu.ToFloatVector(), gpu_values = gpu.ToFloatVector();
    int64_t dropped = 0, pattern_mismatches = 0;
    for (size_t i = 0; i < cpu_values.size(); ++i) {
      dropped += cpu_values[i] == 0.0f;
      pattern_mismatches += (cpu_values[i] == 0.0f) != (gpu_values[i] == 0.0f);
    }
    EXPECT_EQ(pattern_mismatches, 0)
        << DTypeName(dtype) << ": of " << cpu_values.size() << " elements";
    EXPECT_GT(dropped, static_cast<int64_t>(cpu_values.size()) / 4)
        << "p = 0.5 should drop about half";
    ExpectClose(std::string(DTypeName(dtype)) + " dropped probs", gpu, cpu, dtype);
  }
}

// A dropout mask index with a fixed stride longer than S (kernels/common/
// attention_dropout_index.h: what padded runs of a padding-free trainer pass): rows of the mask
// are no longer next to each other, so the GPU's per-row and per-element Philox paths
// (MaskedSoftmaxKernel, SoftmaxBackwardKernel, DropoutCastKernel) must find each element's index.
// Forward and backward against the CPU with the same stride, GpuAttentionTolerances.
TEST_F(CudaAttentionTest, FixedDropoutStrideMatchesCpu) {
  for (const AttentionCase& c : AttentionCases()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      const float p = 0.1f;
      const int64_t stride = c.seq + 13;
      const std::string what = Describe(c, dtype, p) + " stride " + std::to_string(stride);
      const AttentionInputs in = AttentionCaseInputs(c, dtype);
      const ops::AttentionOutput cpu =
          ops::Attention(in.q, in.k, in.v, in.key_mask, c.heads, p, kKey, stride);
      const ops::AttentionOutput gpu = ops::Attention(OnGpu(in.q), OnGpu(in.k), OnGpu(in.v),
                                                      OnGpu(in.key_mask), c.heads, p, kKey, stride);
      ExpectClose(what + " context", gpu.context, cpu.context, dtype);
      const ops::AttentionGrads cpu_grads = ops::AttentionBackward(
          in.d_context, in.q, in.k, in.v, cpu.probs, in.key_mask, c.heads, p, kKey, stride);
      const ops::AttentionGrads gpu_grads = ops::AttentionBackward(
          OnGpu(in.d_context), OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), OnGpu(cpu.probs),
          OnGpu(in.key_mask), c.heads, p, kKey, stride);
      ExpectClose(what + " dq", gpu_grads.dq, cpu_grads.dq, dtype);
      ExpectClose(what + " dk", gpu_grads.dk, cpu_grads.dk, dtype);
      ExpectClose(what + " dv", gpu_grads.dv, cpu_grads.dv, dtype);
    }
  }
}

TEST_F(CudaAttentionTest, PaddingKeysGetExactlyZeroProbability) {
  const AttentionCase c{3, 7, 24, 3, false};
  const AttentionInputs in = AttentionCaseInputs(c, DType::kF16);
  Tensor mask = Tensor::Zeros({c.batch, c.seq}, DType::kI32);
  for (int64_t j = 0; j < 4; ++j) mask.data<int32_t>()[j] = 1;  // row 0: 4 real keys
  for (int64_t j = 0; j < 7; ++j) mask.data<int32_t>()[c.seq + j] = 1;  // row 1: no padding
  // row 2: all padding, which softmaxes to uniform as in Hugging Face.
  const std::vector<float> probs =
      ops::Attention(OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), OnGpu(mask), c.heads, 0.0f, kKey)
          .probs.ToFloatVector();
  for (int64_t b = 0; b < c.batch; ++b) {
    for (int64_t row = 0; row < c.heads * c.seq; ++row) {
      for (int64_t j = 0; j < c.seq; ++j) {
        const float prob = probs[(b * c.heads * c.seq + row) * c.seq + j];
        if (b == 0 && j >= 4) {
          EXPECT_EQ(prob, 0.0f) << "padding key " << j << " row " << row;
        } else if (b == 0) {
          EXPECT_GT(prob, 0.0f) << "real key " << j << " row " << row;
        } else if (b == 2) {
          // Uniform: every biased score is exactly finfo.min, so every exp is exactly 1.
          EXPECT_EQ(prob, 1.0f / 7.0f) << "fully padded row " << row << " key " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace xlmr
