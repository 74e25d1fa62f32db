// The losses of framework/ops/loss.h on CUDA tensors (kernels/cuda/loss.h) against the CPU
// backend on the same inputs.
//
// Tolerances (the sums are compared relative to the CPU sum, gradients relative to the
// gradient's largest magnitude):
//   quantity                 f32 and f16 inputs   why
//   CE, BCE sum              1e-5                 expf/logf/log1pf vs glibc (a few ulps per term)
//                                                 and another fp32 order in the row sums
//   MSE sum                  1e-10                the same fp32 term on both sides; only the
//                                                 order of the double summation differs
//                                                 (bound n * 2^-53 = 7e-11 for n = 6e5 terms)
//   CE, BCE gradient         1e-5                 as the sums
//   CE with label smoothing  1e-5                 as the sums; the uniform term is a row sum of
//                                                 C fp32 terms in a tree on the GPU, in double
//                                                 on the CPU: about sqrt(C) 2^-24 = 2e-6 of it
//                                                 for C = 1000, weighted by e / C
//   MSE gradient             1e-6                 the same two fp32 operations (expected exact)
//   counts                   exact
//   CoSENT loss (f32 only)   1e-11                the same double operations in the same order
//                                                 (kernels/common/cosent.h); libdevice's and
//                                                 glibc's exp/log/log1p may round 1 ulp apart, and
//                                                 such differences in the rows' sums (N terms) and
//                                                 their sum (N rows) add up to <= (2N + 4) 2^-52
//                                                 relative of the normaliser: 1.3e-12 for N = 3000
//   CoSENT gradient          2.4e-7               each entry rounds to float a double that close:
//                                                 the same float or its neighbour, 2^-23 relative
//                                                 at most; bound 2 such ulps of the largest entry
//   CoSENT accumulated, reruns, a stored scale: bit for bit (one kernel, one order)
// Inputs of f16 tensors are rounded once when created, so both backends read the same values.
// Skipped (with the reason) when no GPU is visible, e.g. on the build machine.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "framework/core/device.h"
#include "framework/ops/loss.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cuda/device_context.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using testing::ExpectCloseToLargest;
using testing::OnGpu;

constexpr double kTranscendentalTolerance = 1e-5;
constexpr double kMseSumTolerance = 1e-10;
constexpr double kMseGradTolerance = 1e-6;
constexpr double kCosentLossTolerance = 1e-11;
constexpr double kCosentGradTolerance = 2.4e-7;

class CudaLossTest : public testing::GpuTest {
 protected:
};

// (rows, columns): one column, a few classes, more columns than one block of threads, and a
// large tensor that needs many partial sums.
struct Size {
  int64_t rows, cols;
};
const Size kSizes[] = {{5, 1}, {37, 3}, {16, 300}, {600, 1000}};

std::string Name(const Size& size, DType dtype) {
  return "[" + std::to_string(size.rows) + ", " + std::to_string(size.cols) + "] " +
         DTypeName(dtype);
}

Tensor RandomCpu(const Shape& shape, DType dtype, float low, float high, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> values(static_cast<size_t>(NumElements(shape)));
  for (float& v : values) v = uniform(rng);
  Tensor t = Tensor::Zeros(shape, dtype);
  t.CopyFromFloats(values);
  return t;
}

// Labels in [0, C), every fourth row -100 (ignored); all ignored when `ignore_all`.
Tensor LabelsCpu(const Size& size, bool ignore_all = false) {
  Tensor labels = Tensor::Zeros({size.rows}, DType::kI32);
  std::mt19937 rng(99);
  for (int64_t r = 0; r < size.rows; ++r) {
    const bool ignored = ignore_all || r % 4 == 1;
    labels.data<int32_t>()[r] = ignored ? -100 : static_cast<int32_t>(rng() % size.cols);
  }
  return labels;
}

void ExpectSumClose(const std::string& what, const ops::LossSum& gpu, const ops::LossSum& cpu,
                    double tolerance) {
  EXPECT_EQ(gpu.count, cpu.count) << what;
  const double error = std::fabs(gpu.sum - cpu.sum);
  EXPECT_LE(error, tolerance * std::max(std::fabs(cpu.sum), 1e-30))
      << what << ": gpu sum " << gpu.sum << " cpu sum " << cpu.sum;
}

TEST_F(CudaLossTest, CrossEntropyMatchesCpuWithIgnoredRows) {
  const float scale = 0.25f;
  for (const Size& size : kSizes) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      const std::string what = Name(size, dtype);
      const Tensor logits = RandomCpu({size.rows, size.cols}, dtype, -8.0f, 8.0f, 1);
      const Tensor labels = LabelsCpu(size);
      ExpectSumClose(what, ops::CrossEntropyLoss(OnGpu(logits), OnGpu(labels)),
                     ops::CrossEntropyLoss(logits, labels), kTranscendentalTolerance);
      const Tensor gpu_grad = ops::CrossEntropyBackward(OnGpu(logits), OnGpu(labels), scale);
      ExpectCloseToLargest(what, gpu_grad, ops::CrossEntropyBackward(logits, labels, scale),
                      kTranscendentalTolerance);
      // Ignored rows are exactly zero, not merely small.
      const std::vector<float> grad = gpu_grad.ToFloatVector();
      for (int64_t r = 1; r < size.rows; r += 4) {
        for (int64_t j = 0; j < size.cols; ++j) {
          ASSERT_EQ(grad[r * size.cols + j], 0.0f) << what << " ignored row " << r;
        }
      }
    }
  }
}

// --label_smoothing_factor: the uniform term on every class, nothing on ignored rows.
TEST_F(CudaLossTest, CrossEntropyWithLabelSmoothingMatchesCpu) {
  const float scale = 0.25f;
  for (const float smoothing : {0.1f, 1.0f}) {
    for (const Size& size : kSizes) {
      for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
        const std::string what = Name(size, dtype) + " smoothing " + std::to_string(smoothing);
        const Tensor logits = RandomCpu({size.rows, size.cols}, dtype, -8.0f, 8.0f, 10);
        const Tensor labels = LabelsCpu(size);
        ExpectSumClose(what, ops::CrossEntropyLoss(OnGpu(logits), OnGpu(labels), smoothing),
                       ops::CrossEntropyLoss(logits, labels, smoothing), kTranscendentalTolerance);
        const Tensor gpu_grad = ops::CrossEntropyBackward(OnGpu(logits), OnGpu(labels), scale, smoothing);
        ExpectCloseToLargest(what, gpu_grad, ops::CrossEntropyBackward(logits, labels, scale, smoothing),
                             kTranscendentalTolerance);
        const std::vector<float> grad = gpu_grad.ToFloatVector();
        for (int64_t r = 1; r < size.rows; r += 4) {
          for (int64_t j = 0; j < size.cols; ++j) {
            ASSERT_EQ(grad[r * size.cols + j], 0.0f) << what << " ignored row " << r;
          }
        }
      }
    }
  }
}

TEST_F(CudaLossTest, CrossEntropyOfOnlyIgnoredRowsIsEmpty) {
  const Size size{6, 4};
  const Tensor logits = OnGpu(RandomCpu({size.rows, size.cols}, DType::kF32, -1.0f, 1.0f, 2));
  const ops::LossSum loss = ops::CrossEntropyLoss(logits, OnGpu(LabelsCpu(size, true)));
  EXPECT_EQ(loss.count, 0);
  EXPECT_EQ(loss.sum, 0.0);
  const Tensor none = Tensor::Zeros({0, 3}, DType::kF32, Device::kCuda);
  const ops::LossSum empty =
      ops::CrossEntropyLoss(none, Tensor::Zeros({0}, DType::kI32, Device::kCuda));
  EXPECT_EQ(empty.count, 0);
  EXPECT_EQ(empty.sum, 0.0);
}

TEST_F(CudaLossTest, MseMatchesCpu) {
  const float scale = 1.0f / 3.0f;
  for (const Size& size : kSizes) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      const std::string what = Name(size, dtype);
      const Tensor predictions = RandomCpu({size.rows, size.cols}, dtype, -3.0f, 3.0f, 3);
      const Tensor targets = RandomCpu({size.rows, size.cols}, DType::kF32, -3.0f, 3.0f, 4);
      ExpectSumClose(what, ops::MseLoss(OnGpu(predictions), OnGpu(targets)),
                     ops::MseLoss(predictions, targets), kMseSumTolerance);
      ExpectCloseToLargest(what, ops::MseBackward(OnGpu(predictions), OnGpu(targets), scale),
                      ops::MseBackward(predictions, targets, scale), kMseGradTolerance);
    }
  }
}

TEST_F(CudaLossTest, BceWithLogitsMatchesCpu) {
  const float scale = 0.125f;
  for (const Size& size : kSizes) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      const std::string what = Name(size, dtype);
      // Large |x| exercises the stable form (no overflow of exp for either sign).
      const Tensor logits = RandomCpu({size.rows, size.cols}, dtype, -30.0f, 30.0f, 5);
      const Tensor targets = RandomCpu({size.rows, size.cols}, DType::kF32, 0.0f, 1.0f, 6);
      ExpectSumClose(what, ops::BceWithLogitsLoss(OnGpu(logits), OnGpu(targets)),
                     ops::BceWithLogitsLoss(logits, targets), kTranscendentalTolerance);
      ExpectCloseToLargest(what, ops::BceWithLogitsBackward(OnGpu(logits), OnGpu(targets), scale),
                      ops::BceWithLogitsBackward(logits, targets, scale),
                      kTranscendentalTolerance);
    }
  }
}

TEST_F(CudaLossTest, ElementwiseLossesOfNoRowsAreEmpty) {
  // An empty batch: no launch (an empty grid is a launch error), a zero sum of zero terms.
  const Tensor none = Tensor::Zeros({0, 3}, DType::kF16, Device::kCuda);
  const Tensor targets = Tensor::Zeros({0, 3}, DType::kF32, Device::kCuda);
  for (const ops::LossSum& loss :
       {ops::MseLoss(none, targets), ops::BceWithLogitsLoss(none, targets)}) {
    EXPECT_EQ(loss.count, 0);
    EXPECT_EQ(loss.sum, 0.0);
  }
  EXPECT_EQ(ops::MseBackward(none, targets, 1.0f).shape(), Shape({0, 3}));
  EXPECT_EQ(ops::BceWithLogitsBackward(none, targets, 1.0f).shape(), Shape({0, 3}));
}

TEST_F(CudaLossTest, SumsAreReproducibleBitForBit) {
  // The reduction's shape depends only on the element count, so repeated runs agree exactly.
  const Tensor predictions = OnGpu(RandomCpu({600, 1000}, DType::kF32, -3.0f, 3.0f, 7));
  const Tensor targets = OnGpu(RandomCpu({600, 1000}, DType::kF32, -3.0f, 3.0f, 8));
  const double first = ops::MseLoss(predictions, targets).sum;
  for (int run = 0; run < 3; ++run) EXPECT_EQ(ops::MseLoss(predictions, targets).sum, first);
}

// CoSENT's inputs: scores in [-20, 20] (scale 20 times a cosine) and labels on a grid of six
// values, so that most of a batch's labels are tied with others.
struct CosentBatch {
  Tensor scores, labels;
};

CosentBatch CosentBatchCpu(int64_t n, uint32_t seed, float score_range = 20.0f) {
  CosentBatch batch{RandomCpu({n}, DType::kF32, -score_range, score_range, seed),
                    RandomCpu({n}, DType::kF32, 0.0f, 1.0f, seed + 1)};
  for (int64_t i = 0; i < n; ++i) {
    float& y = batch.labels.data<float>()[i];
    y = std::floor(y * 6.0f) / 5.0f;
  }
  return batch;
}

double TotalAt(const Tensor& totals, int64_t element) {
  const Tensor host = totals.ToDevice(Device::kCpu);
  return reinterpret_cast<const double*>(host.data<int64_t>())[element];
}

TEST_F(CudaLossTest, CosentMatchesCpu) {
  // One score (no pair), a pair, a few, more than the kernel's block, and a large batch; the last
  // with gaps of up to 2000 (exp over- and underflow without the max subtraction).
  const float scale = 0.37f;
  for (const auto& [n, range] : std::vector<std::pair<int64_t, float>>{
           {1, 20.0f}, {2, 20.0f}, {37, 20.0f}, {300, 20.0f}, {3000, 20.0f}, {500, 1000.0f}}) {
    const std::string what = "CoSENT N = " + std::to_string(n) + " scores within " + std::to_string(range);
    const CosentBatch cpu = CosentBatchCpu(n, 11 + static_cast<uint32_t>(n), range);
    const Tensor scores = OnGpu(cpu.scores), labels = OnGpu(cpu.labels);
    const ops::LossSum gpu_loss = ops::CosentLoss(scores, labels);
    const ops::LossSum cpu_loss = ops::CosentLoss(cpu.scores, cpu.labels);
    ASSERT_TRUE(std::isfinite(gpu_loss.sum)) << what;
    EXPECT_EQ(gpu_loss.count, cpu_loss.count) << what;
    EXPECT_LE(std::fabs(gpu_loss.sum - cpu_loss.sum), kCosentLossTolerance * std::max(1.0, std::fabs(cpu_loss.sum)))
        << what << ": gpu " << gpu_loss.sum << " cpu " << cpu_loss.sum;
    std::printf("measured %s: loss %.3g relative\n", what.c_str(),
                std::fabs(gpu_loss.sum - cpu_loss.sum) / std::max(1.0, std::fabs(cpu_loss.sum)));
    // A tiny floor: the all-zero gradient of N = 1 has no largest entry and must be exactly zero.
    ExpectCloseToLargest(what + " gradient", ops::CosentBackward(scores, labels, scale),
                         ops::CosentBackward(cpu.scores, cpu.labels, scale), kCosentGradTolerance, 1e-30);
  }
}

TEST_F(CudaLossTest, CosentAccumulatesItsLossAndReadsAStoredScaleBitForBit) {
  const CosentBatch cpu = CosentBatchCpu(300, 21);
  const Tensor scores = OnGpu(cpu.scores), labels = OnGpu(cpu.labels);
  const double loss = ops::CosentLoss(scores, labels).sum;
  for (int run = 0; run < 3; ++run) EXPECT_EQ(ops::CosentLoss(scores, labels).sum, loss) << "run " << run;
  // totals[1] = 1.5 on the device, then two accumulations queued without waiting.
  Tensor totals_cpu = Tensor::Zeros({2}, DType::kI64);
  reinterpret_cast<double*>(totals_cpu.data<int64_t>())[1] = 1.5;
  Tensor totals = OnGpu(totals_cpu);
  ops::AccumulateCosentLoss(scores, labels, totals, 1);
  ops::AccumulateCosentLoss(scores, labels, totals, 1);
  EXPECT_EQ(TotalAt(totals, 1), 1.5 + loss + loss);
  EXPECT_EQ(TotalAt(totals, 0), 0.0);
  // The backward reads its scale from the state when it runs: the bits of the same value given.
  Tensor state_cpu = Tensor::Zeros({3}, DType::kI64);
  reinterpret_cast<double*>(state_cpu.data<int64_t>())[2] = 0.37f;
  const Tensor state = OnGpu(state_cpu);
  testing::ExpectBitEqual("CoSENT gradient, stored scale", ops::CosentBackward(scores, labels, ops::GradientScale::InState(state, 2)),
                          ops::CosentBackward(scores, labels, 0.37f));
}

// A cross-encoder's training step adds its loss on the device (ops::AccumulateBceWithLogitsLoss):
// the same bits as the summed loss, added to what the slot held, queued without a wait.
TEST_F(CudaLossTest, BceWithLogitsAccumulatesTheBitsOfItsSum) {
  for (DType dtype : {DType::kF32, DType::kF16}) {
    const Tensor logits = OnGpu(RandomCpu({37, 1}, dtype, -8.0f, 8.0f, 9));
    const Tensor targets = OnGpu(RandomCpu({37, 1}, DType::kF32, 0.0f, 1.0f, 10));
    const double loss = ops::BceWithLogitsLoss(logits, targets).sum;
    Tensor totals_cpu = Tensor::Zeros({2}, DType::kI64);
    reinterpret_cast<double*>(totals_cpu.data<int64_t>())[0] = 0.25;
    Tensor totals = OnGpu(totals_cpu);
    ops::AccumulateBceWithLogitsLoss(logits, targets, totals, 0);
    EXPECT_EQ(TotalAt(totals, 0), 0.25 + loss) << DTypeName(dtype);
    EXPECT_EQ(TotalAt(totals, 1), 0.0) << DTypeName(dtype);
  }
}

TEST_F(CudaLossTest, CosentOfNoScoresIsEmpty) {
  // No launch (an empty grid is a launch error): a zero loss of zero terms, nothing accumulated.
  const Tensor none = Tensor::Zeros({0}, DType::kF32, Device::kCuda);
  const ops::LossSum loss = ops::CosentLoss(none, none);
  EXPECT_EQ(loss.count, 0);
  EXPECT_EQ(loss.sum, 0.0);
  EXPECT_EQ(ops::CosentBackward(none, none, 1.0f).shape(), Shape({0}));
  Tensor totals = Tensor::Zeros({1}, DType::kI64, Device::kCuda);
  ops::AccumulateCosentLoss(none, none, totals, 0);
  EXPECT_EQ(TotalAt(totals, 0), 0.0);
}

TEST_F(CudaLossTest, InvalidLabelIsFatal) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the process already runs CUDA threads
  Tensor labels = Tensor::Zeros({3}, DType::kI32);
  labels.data<int32_t>()[1] = 5;  // C = 4
  const Tensor logits = RandomCpu({3, 4}, DType::kF32, -1.0f, 1.0f, 9);
  // The kernel traps; the loss's own synchronisation reports it.
  EXPECT_DEATH(ops::CrossEntropyLoss(OnGpu(logits), OnGpu(labels)), "CUDA error");
}

}  // namespace
}  // namespace xlmr
