// framework/ops/dropout.h on CUDA tensors (kernels/cuda/dropout.h) against the CPU backend.
//
// Tolerance: none, for every dtype. The GPU computes the same Philox4x32-10 words from the same
// key packing, so the mask is identical, and a kept element is one fp32 multiplication by the
// same scale and one rounding: outputs must equal the CPU's bit for bit, in f32 and f16.
// The mask itself is also checked element by element against framework/random's
// DropoutUniform, and the keep rate against 1 - p.
// Skipped (with the reason) when no GPU is visible.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "framework/ops/dropout.h"
#include "framework/random/philox.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using testing::ExpectBitEqual;
using testing::OnGpu;
using testing::RandomTensor;

class CudaDropoutTest : public testing::GpuTest {};

// Keys that differ in every field of the packing, including the seed's high word.
std::vector<DropoutKey> Keys() {
  return {DropoutKey{},
          DropoutKey{0x0123456789abcdefull, 17, 3, 11, 2},
          DropoutKey{0xffffffff00000001ull, 0xfffffffeu, 0xffffffffu, 0xffffu, 0xffffu}};
}

// One element, partial Philox blocks (3, 5), realistic activations, and more Philox blocks
// than one resident grid covers (the grid-stride loop runs several rounds).
const std::vector<Shape>& Shapes() {
  static const std::vector<Shape> shapes = {{1}, {3}, {5}, {1, 768}, {3, 1000}, {4, 12, 512},
                                            {3, 1024, 1025}};
  return shapes;
}

std::string Name(const char* op, DType dtype, const Shape& shape, float p, int key) {
  return std::string(op) + " " + DTypeName(dtype) + " " + ShapeString(shape) +
         " p=" + std::to_string(p) + " key#" + std::to_string(key);
}

TEST_F(CudaDropoutTest, ForwardAndBackwardMatchCpuBitForBit) {
  uint32_t seed = 1;
  const std::vector<DropoutKey> keys = Keys();
  for (const Shape& shape : Shapes()) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      const Tensor x = RandomTensor(shape, dtype, seed++);
      for (float p : {0.1f, 0.5f, 0.9f}) {
        for (size_t k = 0; k < keys.size(); ++k) {
          ExpectBitEqual(Name("Dropout", dtype, shape, p, k), ops::Dropout(OnGpu(x), p, keys[k]),
                         ops::Dropout(x, p, keys[k]));
          ExpectBitEqual(Name("DropoutBackward", dtype, shape, p, k),
                         ops::DropoutBackward(OnGpu(x), p, keys[k]),
                         ops::DropoutBackward(x, p, keys[k]));
        }
      }
    }
  }
}

// ops::DropoutRows (the padding-free mask index): rows at slots out of order, widths that start
// a row's mask mid-Philox-block (1, 7: one Philox call per element) and realistic ones (128,
// 768: four elements per call); CUDA against the CPU bit for bit.
TEST_F(CudaDropoutTest, RowPlacedDropoutMatchesCpuBitForBit) {
  uint32_t seed = 100;
  const std::vector<DropoutKey> keys = Keys();
  const std::vector<int32_t> slots = {5, 0, 12, 3, 40, 41, 2};
  const auto rows = static_cast<int64_t>(slots.size());
  Tensor slot_tensor = Tensor::Zeros({rows}, DType::kI32);
  std::copy(slots.begin(), slots.end(), slot_tensor.data<int32_t>());
  for (int64_t width : {int64_t{1}, int64_t{7}, int64_t{128}, int64_t{768}}) {
    for (DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      const Tensor x = RandomTensor({rows, width}, dtype, seed++);
      for (float p : {0.1f, 0.5f}) {
        for (size_t k = 0; k < keys.size(); ++k) {
          ExpectBitEqual(Name("DropoutRows", dtype, {rows, width}, p, k),
                         ops::DropoutRows(OnGpu(x), p, keys[k], OnGpu(slot_tensor), 42),
                         ops::DropoutRows(x, p, keys[k], slot_tensor, 42));
          ExpectBitEqual(Name("DropoutRowsBackward", dtype, {rows, width}, p, k),
                         ops::DropoutRowsBackward(OnGpu(x), p, keys[k], OnGpu(slot_tensor), 42),
                         ops::DropoutRowsBackward(x, p, keys[k], slot_tensor, 42));
        }
      }
    }
  }
}

// A key whose step the device reads when the kernel runs (DropoutKey::step_on_device, what a
// captured training step uses) gives the mask of the key with that step, whatever its host
// `step` field says: flat, row-placed with whole Philox blocks per row (768) and without (7).
TEST_F(CudaDropoutTest, StepReadOnTheDeviceGivesTheMaskOfThatStep) {
  uint32_t seed = 300;
  for (const DropoutKey& key : Keys()) {
    Tensor step = Tensor::Zeros({1}, DType::kI32);
    step.data<int32_t>()[0] = static_cast<int32_t>(key.step);
    const Tensor step_on_gpu = OnGpu(step);
    DropoutKey on_device = key;
    on_device.step = key.step + 1;  // never read
    on_device.step_on_device = reinterpret_cast<const uint32_t*>(step_on_gpu.raw_data());
    const Tensor flat = RandomTensor({4, 12, 33}, DType::kF16, seed++);
    ExpectBitEqual("Dropout, step on the device", ops::Dropout(OnGpu(flat), 0.1f, on_device),
                   ops::Dropout(flat, 0.1f, key));
    const std::vector<int32_t> slots = {5, 0, 12};
    Tensor slot_tensor = Tensor::Zeros({3}, DType::kI32);
    std::copy(slots.begin(), slots.end(), slot_tensor.data<int32_t>());
    for (int64_t width : {int64_t{7}, int64_t{768}}) {
      const Tensor x = RandomTensor({3, width}, DType::kF32, seed++);
      ExpectBitEqual("DropoutRows, step on the device, width " + std::to_string(width),
                     ops::DropoutRows(OnGpu(x), 0.1f, on_device, OnGpu(slot_tensor), 42),
                     ops::DropoutRows(x, 0.1f, key, slot_tensor, 42));
    }
  }
}

TEST_F(CudaDropoutTest, MaskIsDropoutUniformAtLeastPAndKeepsOneMinusP) {
  // All ones: an output is either 0 (dropped) or exactly the scale (kept).
  const int64_t count = 3 * 1000 * 101;
  Tensor ones = Tensor::Zeros({count}, DType::kF32);
  ones.CopyFromFloats(std::vector<float>(count, 1.0f));
  const DropoutKey key{20240611, 5, 1, 7, 3};
  for (float p : {0.1f, 0.5f}) {
    const std::vector<float> y = ops::Dropout(OnGpu(ones), p, key).ToFloatVector();
    const float scale = static_cast<float>(1.0 / (1.0 - static_cast<double>(p)));
    int64_t kept = 0, wrong = 0, first_wrong = -1;
    for (int64_t i = 0; i < count; ++i) {
      const bool keep = DropoutUniform(key, i) >= p;
      kept += keep;
      if (y[i] != (keep ? scale : 0.0f) && wrong++ == 0) first_wrong = i;
    }
    EXPECT_EQ(wrong, 0) << "p=" << p << ": first mismatch at element " << first_wrong
                        << ", gpu " << y[first_wrong];
    // Binomial(count, 1 - p): 6 standard deviations, so a correct mask fails ~1e-9 of the time.
    const double expected = count * (1.0 - p);
    const double sigma = std::sqrt(count * p * (1.0 - p));
    EXPECT_NEAR(static_cast<double>(kept), expected, 6 * sigma) << "p=" << p;
  }
}

TEST_F(CudaDropoutTest, ZeroProbabilityReturnsTheInputAndEmptyIsEmpty) {
  const Tensor x = OnGpu(RandomTensor({3, 1000}, DType::kF16, 9));
  EXPECT_EQ(ops::Dropout(x, 0.0f, DropoutKey{}).raw_data(), x.raw_data());
  const Tensor empty = OnGpu(Tensor::Zeros({0, 768}, DType::kF32));
  EXPECT_EQ(ops::Dropout(empty, 0.5f, DropoutKey{}).numel(), 0);
}

}  // namespace
}  // namespace xlmr
