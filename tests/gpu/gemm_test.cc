// kernels/cuda/gemm.h (Gemm, GemmStridedBatched) against a double-precision host product of the
// same (already rounded) inputs: every transpose combination, f32/f16 operands and outputs,
// alpha, beta = 1 accumulation, the fp32 bias epilogue, padded leading dimensions, batch strides
// (including a broadcast operand, stride 0) and the untouched padding of C. Every case runs
// twice: as cuBLASLt takes it directly, and through the staging path (StageEveryGemmForTesting:
// C, A and B copied to 16-byte-aligned layouts), which products with 2-byte-aligned 16-bit
// matrices take when cuBLASLt has no algorithm for them; both must give the same numbers, so
// no test depends on which kernels a cuBLASLt version offers.
//
// Also: the bias gradient from the weight-gradient product (GemmWithRowSumsOfA) and the measured
// choice of algorithm (GemmAlgorithms::kMeasured).
//
// Tolerances (kTolerances): the GPU accumulates in fp32, the reference in double, so an element
// may be off by a few fp32 roundings of the running sum, bounded by kSumRelative * scale with
// scale = |alpha| sum_k |a_ik b_kj| + |beta c_ij| + |bias_j|; an f16 output adds its own final
// rounding, one fp16 ulp. K <= 40 here, so fp32 sums are far inside 1e-5, while TF32 (an error
// ~2^-11 per product) would not be.
// Skipped (with the reason) when no GPU is visible, e.g. on the build machine.
#include "kernels/cuda/gemm.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "framework/core/device.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cuda/device_context.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr::kernels::cuda {
namespace {

constexpr double kSumRelative = 1e-5;  // fp32 vs double accumulation, times scale
constexpr int kF16OutputUlps = 1;      // the output's own rounding to f16 or bf16

// Runs the test body once directly and once with every product staged (the header's note).
class CudaGemmTest : public xlmr::testing::GpuTest,
                     public ::testing::WithParamInterface<bool> {
 protected:
  void SetUp() override {
    xlmr::testing::GpuTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    StageEveryGemmForTesting(GetParam());
  }
  void TearDown() override {
    StageEveryGemmForTesting(false);
    SetGemmAlgorithms(GemmAlgorithms::kHeuristic);
  }

  std::mt19937 rng_{7};

  // A host tensor of random values in [-1, 1], rounded to dtype; returns the rounded values.
  Tensor Random(const Shape& shape, DType dtype, std::vector<float>* values) {
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    Tensor t = Tensor::Zeros(shape, dtype);
    std::vector<float> raw(static_cast<size_t>(t.numel()));
    for (float& v : raw) v = uniform(rng_);
    t.CopyFromFloats(raw);
    *values = t.ToFloatVector();
    return t;
  }
};

// Element (r, c) of op(X_i), X stored as `layout` in `values`.
double OperatedAt(const std::vector<float>& values, const MatrixLayout& layout, Transpose t,
                  int64_t i, int64_t r, int64_t c) {
  if (t == Transpose::kYes) std::swap(r, c);
  return values[i * layout.batch_stride + r * layout.ld + c];
}

struct Reference {
  std::vector<double> value, scale;  // per element of the C tensor
};

// The expected C tensor (padding keeps its initial values, with scale 0: must be untouched).
Reference ReferenceProduct(int64_t batch, const std::vector<float>& a, const MatrixLayout& la,
                           Transpose ta, const std::vector<float>& b, const MatrixLayout& lb,
                           Transpose tb, const std::vector<float>& bias, float alpha, float beta,
                           const std::vector<float>& c0, const MatrixLayout& lc) {
  const int64_t k_size = ta == Transpose::kNo ? la.cols : la.rows;
  Reference ref{std::vector<double>(c0.begin(), c0.end()), std::vector<double>(c0.size(), 0.0)};
  for (int64_t i = 0; i < batch; ++i) {
    for (int64_t r = 0; r < lc.rows; ++r) {
      for (int64_t c = 0; c < lc.cols; ++c) {
        double sum = 0.0, abs_sum = 0.0;
        for (int64_t k = 0; k < k_size; ++k) {
          const double p = OperatedAt(a, la, ta, i, r, k) * OperatedAt(b, lb, tb, i, k, c);
          sum += p;
          abs_sum += std::fabs(p);
        }
        const int64_t at = i * lc.batch_stride + r * lc.ld + c;
        const double bias_j = bias.empty() ? 0.0 : bias[c];
        ref.value[at] = alpha * sum + beta * c0[at] + bias_j;
        ref.scale[at] = std::fabs(alpha) * abs_sum + std::fabs(beta * c0[at]) + std::fabs(bias_j);
      }
    }
  }
  return ref;
}

void ExpectMatches(const Tensor& c_gpu, const Reference& ref) {
  const std::vector<float> got = c_gpu.ToDevice(Device::kCpu).ToFloatVector();
  ASSERT_EQ(got.size(), ref.value.size());
  const int ulps = c_gpu.dtype() != DType::kF32 ? kF16OutputUlps : 0;
  int64_t violations = 0;
  std::ostringstream first;
  for (size_t i = 0; i < got.size(); ++i) {
    const double bound =
        kSumRelative * ref.scale[i] + ulps * xlmr::testing::HalfUlp(ref.value[i], c_gpu.dtype()) * (ref.scale[i] > 0);
    if (std::fabs(got[i] - ref.value[i]) <= bound) continue;
    if (violations++ == 0) {
      first << "element " << i << ": gpu " << got[i] << ", expected " << ref.value[i] << " (bound "
            << bound << ")";
    }
  }
  EXPECT_EQ(violations, 0) << first.str();
}

const char* Name(Transpose t) { return t == Transpose::kYes ? "T" : "N"; }

TEST_P(CudaGemmTest, EveryTransposeDTypeBiasAndBetaMatchesDoubleReference) {
  const int64_t m = 13, n = 11, k = 19;
  for (Transpose ta : {Transpose::kNo, Transpose::kYes}) {
    for (Transpose tb : {Transpose::kNo, Transpose::kYes}) {
      for (DType operands : {DType::kF32, DType::kF16, DType::kBF16}) {
        for (DType output : {DType::kF32, DType::kF16, DType::kBF16}) {
          for (bool with_bias : {false, true}) {
            for (float beta : {0.0f, 1.0f}) {
              std::ostringstream trace;
              trace << Name(ta) << Name(tb) << " " << DTypeName(operands) << "->"
                    << DTypeName(output) << (with_bias ? " bias" : "") << " beta " << beta;
              SCOPED_TRACE(trace.str());
              std::vector<float> a, b, bias, c0;
              const Tensor ha =
                  Random(ta == Transpose::kNo ? Shape{m, k} : Shape{k, m}, operands, &a);
              const Tensor hb =
                  Random(tb == Transpose::kNo ? Shape{k, n} : Shape{n, k}, operands, &b);
              const Tensor hc = Random({m, n}, output, &c0);
              Tensor hbias;
              if (with_bias) hbias = Random({n}, DType::kF32, &bias);
              Tensor c = hc.ToDevice(Device::kCuda);
              Gemm(ha.ToDevice(Device::kCuda), ta, hb.ToDevice(Device::kCuda), tb,
                   with_bias ? hbias.ToDevice(Device::kCuda) : Tensor(), 0.5f, beta, &c);
              const MatrixLayout la{ha.dim(0), ha.dim(1), ha.dim(1), 0};
              const MatrixLayout lb{hb.dim(0), hb.dim(1), hb.dim(1), 0};
              ExpectMatches(
                  c, ReferenceProduct(1, a, la, ta, b, lb, tb, bias, 0.5f, beta, c0, {m, n, n, 0}));
            }
          }
        }
      }
    }
  }
}

// Attention-like batches: A padded (ld > cols, odd) with an odd batch stride beyond its
// matrices, B broadcast (stride 0) or padded and transposed, C padded or contiguous, beta 0 or
// 1 (accumulating into C: the staging path must copy C in). Odd strides leave every other
// 16-bit matrix 2-byte aligned.
TEST_P(CudaGemmTest, StridedBatchedMatchesDoubleReferenceAndKeepsPadding) {
  const int64_t batch = 3, m = 7, n = 10, k = 40;
  struct Variant {
    DType operands, output;
    Transpose tb;
    bool broadcast_b;
    bool padded_c;
    float beta = 0.0f;
  };
  const Variant variants[] = {
      {DType::kF16, DType::kF16, Transpose::kYes, false, true},
      {DType::kF16, DType::kF32, Transpose::kNo, true, true},
      {DType::kF32, DType::kF32, Transpose::kYes, true, true},
      {DType::kF32, DType::kF16, Transpose::kNo, false, false},
      {DType::kF32, DType::kF16, Transpose::kNo, false, true},     // f32 -> f16 into padded C
      {DType::kBF16, DType::kBF16, Transpose::kYes, false, true},  // bf16 autocast's attention
      {DType::kBF16, DType::kF32, Transpose::kNo, true, true},
      {DType::kF32, DType::kBF16, Transpose::kNo, false, false},
      {DType::kF16, DType::kF16, Transpose::kNo, false, true, 1.0f},
      {DType::kBF16, DType::kF32, Transpose::kYes, false, true, 1.0f},
  };
  for (const Variant& v : variants) {
    SCOPED_TRACE(std::string(DTypeName(v.operands)) + "->" + DTypeName(v.output) + " b" +
                 Name(v.tb) + (v.broadcast_b ? " broadcast" : "") +
                 (v.padded_c ? " padded c" : "") + " beta " + std::to_string(v.beta));
    const MatrixLayout la{m, k, k + 3, m * (k + 3) + 5};
    const int64_t b_rows = v.tb == Transpose::kNo ? k : n, b_cols = v.tb == Transpose::kNo ? n : k;
    const MatrixLayout lb{b_rows, b_cols, b_cols + 1, v.broadcast_b ? 0 : b_rows * (b_cols + 1)};
    const MatrixLayout lc =
        v.padded_c ? MatrixLayout{m, n, n + 2, m * (n + 2) + 1} : MatrixLayout{m, n, n, m * n};
    std::vector<float> a, b, c0;
    const Tensor ha = Random({batch * la.batch_stride}, v.operands, &a);
    const Tensor hb =
        Random({std::max<int64_t>(lb.batch_stride * batch, b_rows * lb.ld)}, v.operands, &b);
    const Tensor hc = Random({batch * lc.batch_stride}, v.output, &c0);
    Tensor c = hc.ToDevice(Device::kCuda);
    GemmStridedBatched(batch, ha.ToDevice(Device::kCuda), la, Transpose::kNo,
                       hb.ToDevice(Device::kCuda), lb, v.tb, 1.0f, v.beta, &c, lc);
    ExpectMatches(
        c, ReferenceProduct(batch, a, la, Transpose::kNo, b, lb, v.tb, {}, 1.0f, v.beta, c0, lc));
  }
}

// A Linear's weight gradient with its bias gradient from the same call (GemmWithRowSumsOfA:
// dweight += dy^T x, dbias = dy's column sums). Staged, it must decline and leave C as it was;
// direct, cuBLASLt may lack the fused form (then the caller sums separately: it declines
// likewise), and when it runs both outputs must match the double reference.
TEST_P(CudaGemmTest, RowSumsOfAMatchDoubleReferenceOrDeclineUntouched) {
  const int64_t rows = 96, out = 40, in = 24;
  for (DType operands : {DType::kF16, DType::kBF16}) {
    SCOPED_TRACE(DTypeName(operands));
    std::vector<float> dy, x, c0;
    const Tensor hdy = Random({rows, out}, operands, &dy);
    const Tensor hx = Random({rows, in}, operands, &x);
    const Tensor hc = Random({out, in}, DType::kF32, &c0);
    Tensor c = hc.ToDevice(Device::kCuda);
    Tensor sums = Tensor::Zeros({out}, DType::kF32, Device::kCuda);
    const bool fused = GemmWithRowSumsOfA(hdy.ToDevice(Device::kCuda), Transpose::kYes,
                                          hx.ToDevice(Device::kCuda), Transpose::kNo, 1.0f, 1.0f, &c, &sums);
    RecordProperty(std::string("row_sums_fused_") + DTypeName(operands), fused ? "yes" : "no");
    if (GetParam()) {
      EXPECT_FALSE(fused) << "the staging path has no fused bias gradient";
    }
    if (!fused) {
      EXPECT_EQ(c.ToDevice(Device::kCpu).ToFloatVector(), c0) << "declined, yet C changed";
      continue;
    }
    ExpectMatches(c, ReferenceProduct(1, dy, {rows, out, out, 0}, Transpose::kYes, x, {rows, in, in, 0},
                                      Transpose::kNo, {}, 1.0f, 1.0f, c0, {out, in, in, 0}));
    Reference column_sums{std::vector<double>(out, 0.0), std::vector<double>(out, 0.0)};
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < out; ++j) {
        column_sums.value[j] += dy[r * out + j];
        column_sums.scale[j] += std::fabs(dy[r * out + j]);
      }
    }
    ExpectMatches(sums, column_sums);
  }
}

// GemmAlgorithms::kMeasured: new problems time the heuristic's candidates on their first call's
// operands, so that call must still compute the product once: with beta = 1 the timing runs go
// to a scratch (timing in C would add the product to it four more times), with beta = 0 C itself
// is overwritten by the real run. Shapes no other test uses, so the direct run plans them here
// (staged, the f32 copy of C may reuse a plan).
TEST_P(CudaGemmTest, MeasuredChoiceComputesEachFirstCallOnce) {
  SetGemmAlgorithms(GemmAlgorithms::kMeasured);
  const int64_t m = 264, n = 136, k = 200;  // big enough for cuBLASLt to offer candidates
  for (float beta : {0.0f, 1.0f}) {
    SCOPED_TRACE("beta " + std::to_string(beta));
    const GemmPlanCounts before = CountGemmPlans();
    std::vector<float> a, b, c0;
    const Tensor ha = Random({m, k}, DType::kF16, &a);
    const Tensor hb = Random({n, k}, DType::kF16, &b);
    const Tensor hc = Random({m, n}, beta == 0.0f ? DType::kF16 : DType::kF32, &c0);
    Tensor c = hc.ToDevice(Device::kCuda);
    Gemm(ha.ToDevice(Device::kCuda), Transpose::kNo, hb.ToDevice(Device::kCuda), Transpose::kYes, Tensor(),
         1.0f, beta, &c);
    ExpectMatches(c, ReferenceProduct(1, a, {m, k, k, 0}, Transpose::kNo, b, {n, k, k, 0}, Transpose::kYes,
                                      {}, 1.0f, beta, c0, {m, n, n, 0}));
    const GemmPlanCounts after = CountGemmPlans();
    if (GetParam()) continue;
    EXPECT_EQ(after.problems, before.problems + 1);
    EXPECT_GE(after.candidates_timed - before.candidates_timed, 2 * (after.measured - before.measured));
    RecordProperty(beta == 0.0f ? "candidates_timed_beta0" : "candidates_timed_beta1",
                   static_cast<int>(after.candidates_timed - before.candidates_timed));
  }
}

INSTANTIATE_TEST_SUITE_P(DirectAndStaged, CudaGemmTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("Staged") : std::string("Direct");
                         });

}  // namespace
}  // namespace xlmr::kernels::cuda
