// ops::Attention / ops::AttentionBackward on CUDA tensors (kernels/cuda/attention.h) against the
// CPU backend on the same inputs.
//
// Tolerances: error = max_i |gpu_i - cpu_i| / max_i |cpu_i| (relative to the tensor's largest
// magnitude, so tiny probabilities do not dominate), per dtype:
//   dtype  forward (probs, context)  backward (dq, dk, dv)  why
//   f32    1e-4                      1e-4                   fp32 GEMMs in another summation order
//                                                           and expf vs std::exp differ by ~1e-6
//   f16    1e-2                      1e-2                   a different fp32 sum may round an f16
//                                                           intermediate (scores, d_dropped, dS)
//                                                           one ulp (2^-11) the other way
// An indexing, masking or dropout-mask error changes elements by O(1) of the largest one.
// The dropout mask and the padding are checked exactly (DropoutMaskIsTheCpuMaskExactly,
// PaddingKeysGetExactlyZeroProbability).
// Most cases have B > 1 and heads > 1, so a wrong head-major copy or batch stride in the CUDA
// backend's one-GEMM-per-product layout moves whole blocks of values and fails.
// Skipped (with the reason) when no GPU is visible, e.g. on the build machine.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "framework/ops/attention.h"
#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using testing::ExpectCloseToLargest;
using testing::OnGpu;

struct Case {
  int64_t batch, seq, hidden;
  int heads;
  bool padding;  // batch row b keeps its first max(0, S - 2b) keys (0: all padding)
  std::string Name() const {
    std::ostringstream name;
    name << "B=" << batch << " S=" << seq << " H=" << hidden << " heads=" << heads
         << (padding ? " padded" : "");
    return name.str();
  }
};

// Realistic (XLM-R base) and awkward shapes: odd S, S = 1, small head_dim; S > one block of
// threads (128); S > 1024 and not a multiple of 4, so a row's keys span several Philox blocks
// per thread and rows start inside a Philox block; a fully padded batch row (softmaxes to
// uniform, as on the CPU).
const Case kCases[] = {
    {2, 7, 24, 3, true},
    {4, 128, 768, 12, true},
    {3, 1, 16, 2, false},
    {1, 130, 40, 5, false},
    {3, 4, 24, 3, true},    // keys 4, 2, 0
    {2, 1030, 16, 2, true},
};

// bf16: fp16's bound times 8 (2^-8 vs 2^-11 per rounding), not yet run on a GPU.
double Tolerance(DType dtype) {
  return dtype == DType::kF16 ? 1e-2 : dtype == DType::kBF16 ? 8e-2 : 1e-4;
}

class CudaAttentionTest : public testing::GpuTest {};

Tensor RandomCpu(const Shape& shape, DType dtype, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<float> values(static_cast<size_t>(NumElements(shape)));
  for (float& v : values) v = uniform(rng);
  Tensor t = Tensor::Zeros(shape, dtype);
  t.CopyFromFloats(values);  // f16: both backends see the same rounded values
  return t;
}

Tensor KeyMaskCpu(const Case& c) {
  Tensor mask = Tensor::Zeros({c.batch, c.seq}, DType::kI32);
  for (int64_t b = 0; b < c.batch; ++b) {
    const int64_t real = c.padding ? std::max<int64_t>(0, c.seq - 2 * b) : c.seq;
    for (int64_t j = 0; j < real; ++j) mask.data<int32_t>()[b * c.seq + j] = 1;
  }
  return mask;
}

struct Inputs {
  Tensor q, k, v, key_mask;
};

Inputs MakeInputs(const Case& c, DType dtype) {
  const Shape shape = {c.batch, c.seq, c.hidden};
  return {RandomCpu(shape, dtype, 1), RandomCpu(shape, dtype, 2), RandomCpu(shape, dtype, 3),
          KeyMaskCpu(c)};
}

const DropoutKey kKey{/*seed=*/1234567890123ull, /*step=*/7, /*micro_step=*/1, /*layer=*/3,
                      /*op=*/1};

TEST_F(CudaAttentionTest, ForwardMatchesCpu) {
  for (const Case& c : kCases) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (float p : {0.0f, 0.1f}) {
        const std::string what = c.Name() + " " + DTypeName(dtype) + " p=" + std::to_string(p);
        const Inputs in = MakeInputs(c, dtype);
        const ops::AttentionOutput cpu =
            ops::Attention(in.q, in.k, in.v, in.key_mask, c.heads, p, kKey);
        const ops::AttentionOutput gpu = ops::Attention(
            OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), OnGpu(in.key_mask), c.heads, p, kKey);
        ExpectCloseToLargest(what + " probs", gpu.probs, cpu.probs, Tolerance(dtype));
        ExpectCloseToLargest(what + " context", gpu.context, cpu.context, Tolerance(dtype));
      }
    }
  }
}

TEST_F(CudaAttentionTest, BackwardMatchesCpu) {
  for (const Case& c : kCases) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (float p : {0.0f, 0.1f}) {
        const std::string what = c.Name() + " " + DTypeName(dtype) + " p=" + std::to_string(p);
        const Inputs in = MakeInputs(c, dtype);
        const Tensor d_context = RandomCpu(in.q.shape(), dtype, 4);
        // Both backwards get the CPU forward's probs, so only the backward is compared.
        const Tensor probs = ops::Attention(in.q, in.k, in.v, in.key_mask, c.heads, p, kKey).probs;
        const ops::AttentionGrads cpu = ops::AttentionBackward(
            d_context, in.q, in.k, in.v, probs, in.key_mask, c.heads, p, kKey);
        const ops::AttentionGrads gpu = ops::AttentionBackward(
            OnGpu(d_context), OnGpu(in.q), OnGpu(in.k), OnGpu(in.v), OnGpu(probs),
            OnGpu(in.key_mask), c.heads, p, kKey);
        ExpectCloseToLargest(what + " dq", gpu.dq, cpu.dq, Tolerance(dtype));
        ExpectCloseToLargest(what + " dk", gpu.dk, cpu.dk, Tolerance(dtype));
        ExpectCloseToLargest(what + " dv", gpu.dv, cpu.dv, Tolerance(dtype));
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
    const Tensor q = RandomCpu({batch, seq, hidden}, dtype, 5);
    const Tensor k = RandomCpu({batch, seq, hidden}, dtype, 6);
    std::vector<float> identity(static_cast<size_t>(batch * seq * hidden), 0.0f);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t j = 0; j < seq; ++j) {
        for (int64_t h = 0; h < heads; ++h) identity[(b * seq + j) * hidden + h * seq + j] = 1.0f;
      }
    }
    Tensor v = Tensor::Zeros({batch, seq, hidden}, dtype);
    v.CopyFromFloats(identity);
    const Tensor mask = KeyMaskCpu({batch, seq, hidden, static_cast<int>(heads), false});
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
    ExpectCloseToLargest(std::string(DTypeName(dtype)) + " dropped probs", gpu, cpu, Tolerance(dtype));
  }
}

TEST_F(CudaAttentionTest, PaddingKeysGetExactlyZeroProbability) {
  const Case c{3, 7, 24, 3, false};
  const Inputs in = MakeInputs(c, DType::kF16);
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
