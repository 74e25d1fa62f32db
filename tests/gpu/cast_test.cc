// kernels/cuda/cast.h against the CPU conversions of framework/tensor/half.h: CastTensor, and
// CastMatrices (strided batches, the GEMM's staging path) against the same rounding applied
// element by element on the host, padding untouched.
//
// Tolerance: none. Both sides round once to nearest-even from an exactly widened fp32 value, so
// every non-NaN result must match bit for bit. NaN inputs must give NaN, compared by class only:
// the GPU's cvt instruction returns its canonical NaN while the CPU reference keeps the sign and
// payload, and nothing in training depends on a NaN's bits.
// Skipped (with the reason) when no GPU is visible, e.g. on the build machine.
#include "kernels/cuda/cast.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "framework/core/device.h"
#include "framework/tensor/half.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cuda/device_context.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr::kernels::cuda {
namespace {

class CudaCastTest : public xlmr::testing::GpuTest {
 protected:
};

// ---- Host <-> device helpers (raw bit patterns, so NaN payloads survive the trip) ----

template <typename Bits>
Tensor DeviceTensorFromBits(const std::vector<Bits>& bits, DType dtype) {
  Tensor host = Tensor::Zeros({static_cast<int64_t>(bits.size())}, dtype, Device::kCpu);
  EXPECT_EQ(host.bytes(), bits.size() * sizeof(Bits));
  std::memcpy(host.raw_data(), bits.data(), host.bytes());
  return host.ToDevice(Device::kCuda);
}

template <typename Bits>
std::vector<Bits> BitsOf(const Tensor& device_tensor) {
  const Tensor host = device_tensor.ToDevice(Device::kCpu);
  std::vector<Bits> bits(static_cast<size_t>(host.numel()));
  EXPECT_EQ(host.bytes(), bits.size() * sizeof(Bits));
  std::memcpy(bits.data(), host.raw_data(), host.bytes());
  return bits;
}

Tensor CastOnGpu(const Tensor& src, DType dtype) {
  Tensor dst = Tensor::Zeros(src.shape(), dtype, Device::kCuda);
  CastTensor(src, &dst);
  return dst;
}

// ---- The CPU reference, as bit patterns ----

bool IsNanBits(DType dtype, uint32_t bits) {
  switch (dtype) {
    case DType::kF32: return (bits & 0x7fffffffu) > 0x7f800000u;
    case DType::kF16: return (bits & 0x7fffu) > 0x7c00u;
    case DType::kBF16: return (bits & 0x7fffu) > 0x7f80u;
    default: return false;
  }
}

float CpuWidenToFloat(DType dtype, uint32_t bits) {
  switch (dtype) {
    case DType::kF16: return HalfToFloat(Half{static_cast<uint16_t>(bits)});
    case DType::kBF16: return BFloat16ToFloat(BFloat16{static_cast<uint16_t>(bits)});
    default: return BitsToFloat(bits);
  }
}

uint32_t CpuRoundFromFloat(DType dtype, float value) {
  switch (dtype) {
    case DType::kF16: return FloatToHalf(value).bits;
    case DType::kBF16: return FloatToBFloat16(value).bits;
    default: return FloatBits(value);
  }
}

// Compares every GPU result with the CPU conversion; reports the count and the first few
// mismatches (one EXPECT per element would drown the log on a systematic error).
void ExpectMatchesCpu(DType from, const std::vector<uint32_t>& inputs, DType to,
                      const std::vector<uint32_t>& outputs) {
  ASSERT_EQ(inputs.size(), outputs.size());
  int64_t mismatches = 0;
  std::ostringstream examples;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const uint32_t expected = CpuRoundFromFloat(to, CpuWidenToFloat(from, inputs[i]));
    const bool ok = IsNanBits(to, expected) ? IsNanBits(to, outputs[i]) : outputs[i] == expected;
    if (ok) continue;
    if (++mismatches <= 8) {
      examples << "\n  input 0x" << std::hex << inputs[i] << " -> gpu 0x" << outputs[i]
               << ", cpu 0x" << expected << std::dec;
    }
  }
  EXPECT_EQ(mismatches, 0) << DTypeName(from) << " -> " << DTypeName(to) << examples.str();
}

template <typename Bits>
std::vector<uint32_t> Widen(const std::vector<Bits>& bits) {
  return std::vector<uint32_t>(bits.begin(), bits.end());
}

// ---- Inputs ----

// Floats that probe every rounding path: specials, the f16 overflow edge, f16 and f32
// subnormals, exact ties for f16 and bf16 and their neighbours, then random bit patterns over
// the whole range (which also include NaNs with payloads). ~2.4M values: larger than one
// resident grid on any GPU, so the grid-stride loop runs several rounds.
std::vector<uint32_t> TrickyFloatBits() {
  std::vector<float> values = {0.0f, 1.0f, 65504.0f, 65519.99f, 65520.0f, 65536.0f, 1e9f,
                               std::numeric_limits<float>::max(),
                               std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::denorm_min(),
                               std::numeric_limits<float>::min(), std::ldexp(1.0f, -14),
                               std::nextafter(std::ldexp(1.0f, -14), 0.0f), std::ldexp(1.0f, -24),
                               std::ldexp(1.0f, -25), std::ldexp(1.5f, -25), std::ldexp(1.0f, -26),
                               1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -8)};
  // Every f16 tie (midpoint of two adjacent finite halves) and the floats just either side.
  for (uint32_t bits = 0; bits < 0x7bffu; ++bits) {
    const float lo = HalfToFloat(Half{static_cast<uint16_t>(bits)});
    const float hi = HalfToFloat(Half{static_cast<uint16_t>(bits + 1)});
    const float mid = lo + (hi - lo) / 2;
    values.insert(values.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, hi)});
  }
  std::vector<uint32_t> bits;
  for (float v : values) {
    bits.push_back(FloatBits(v));
    bits.push_back(FloatBits(-v));
  }
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<uint32_t> any_bits;
  for (int i = 0; i < 2000000; ++i) {
    uint32_t random = any_bits(rng);
    if (i % 4 == 0) random = (random & 0xffff0000u) | 0x8000u;  // exact bf16 ties
    if (i % 4 == 1) random &= 0x807fffffu;  // f32 subnormals
    bits.push_back(random);
  }
  bits.insert(bits.end(), {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fc12345u, 0x7f800000u});
  return bits;
}

// All 65536 patterns of a 16-bit type: every value, both infinities and all NaNs.
std::vector<uint16_t> AllSixteenBitPatterns() {
  std::vector<uint16_t> bits(1 << 16);
  for (uint32_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i);
  return bits;
}

// ---- Tests ----

TEST_F(CudaCastTest, FloatToHalfAndBFloat16MatchCpuBitForBit) {
  const std::vector<uint32_t> inputs = TrickyFloatBits();
  const Tensor src = DeviceTensorFromBits(inputs, DType::kF32);
  ExpectMatchesCpu(DType::kF32, inputs, DType::kF16,
                   Widen(BitsOf<uint16_t>(CastOnGpu(src, DType::kF16))));
  ExpectMatchesCpu(DType::kF32, inputs, DType::kBF16,
                   Widen(BitsOf<uint16_t>(CastOnGpu(src, DType::kBF16))));
}

TEST_F(CudaCastTest, EverySixteenBitValueConvertsToEveryOtherType) {
  const std::vector<uint32_t> inputs = Widen(AllSixteenBitPatterns());
  for (DType from : {DType::kF16, DType::kBF16}) {
    const Tensor src = DeviceTensorFromBits(AllSixteenBitPatterns(), from);
    ExpectMatchesCpu(from, inputs, DType::kF32, BitsOf<uint32_t>(CastOnGpu(src, DType::kF32)));
    ExpectMatchesCpu(from, inputs, DType::kF16,
                     Widen(BitsOf<uint16_t>(CastOnGpu(src, DType::kF16))));
    ExpectMatchesCpu(from, inputs, DType::kBF16,
                     Widen(BitsOf<uint16_t>(CastOnGpu(src, DType::kBF16))));
  }
}

TEST_F(CudaCastTest, SameDTypeIsAnExactCopyIncludingNanPayloads) {
  const std::vector<uint32_t> inputs = TrickyFloatBits();
  const std::vector<uint32_t> outputs =
      BitsOf<uint32_t>(CastOnGpu(DeviceTensorFromBits(inputs, DType::kF32), DType::kF32));
  ASSERT_EQ(outputs.size(), inputs.size());
  const auto first_difference = std::mismatch(inputs.begin(), inputs.end(), outputs.begin());
  EXPECT_TRUE(first_difference.first == inputs.end())
      << "element " << (first_difference.first - inputs.begin()) << ": 0x" << std::hex
      << *first_difference.first << " copied as 0x" << *first_difference.second;
}

TEST_F(CudaCastTest, WritesOnlyTheDestinationViewAtAnOddOffset) {
  // Views inside flat buffers are how weights live; offsets need not be aligned to 4 elements.
  std::vector<float> values(11);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.1f * static_cast<float>(i) - 0.3f;
  Tensor src_buffer = Tensor::Zeros({16}, DType::kF32, Device::kCuda);
  src_buffer.View(5, {11}).CopyFromFloats(values);
  Tensor dst_buffer = Tensor::Zeros({20}, DType::kF16, Device::kCuda);
  Tensor dst = dst_buffer.View(3, {11});
  CastTensor(src_buffer.View(5, {11}), &dst);

  const std::vector<uint16_t> out = BitsOf<uint16_t>(dst_buffer);
  for (int i = 0; i < 20; ++i) {
    const bool inside = i >= 3 && i < 14;
    const uint16_t expected = inside ? FloatToHalf(values[i - 3]).bits : 0;
    EXPECT_EQ(out[i], expected) << "element " << i << (inside ? " (in view)" : " (outside)");
  }
}

// Odd leading dimensions and batch strides on both sides (2-byte aligned f16 matrices), a
// broadcast source (stride 0), every dtype pair: each element of each matrix is the CPU
// rounding of its source element, and every element outside the destination's matrices keeps
// its sentinel.
TEST_F(CudaCastTest, CastMatricesConvertsEveryMatrixAndLeavesPadding) {
  const int64_t batch = 3, rows = 5, cols = 7;
  const float kSentinel = 1234.0f;
  for (DType from : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (DType to : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (bool broadcast : {false, true}) {
        SCOPED_TRACE(std::string(DTypeName(from)) + " -> " + DTypeName(to) +
                     (broadcast ? " broadcast source" : ""));
        const MatrixLayout src_layout{rows, cols, cols + 2, broadcast ? 0 : rows * (cols + 2) + 3};
        const MatrixLayout dst_layout{rows, cols, cols + 1, rows * (cols + 1) + 1};
        const int64_t src_size = broadcast ? rows * (cols + 2) : batch * src_layout.batch_stride;
        std::vector<float> src_values(static_cast<size_t>(src_size));
        for (size_t i = 0; i < src_values.size(); ++i) {
          src_values[i] = 0.3183099f * static_cast<float>(i) - 11.0f;  // not representable in 16 bits
        }
        Tensor src = Tensor::Zeros({src_size}, from);
        src.CopyFromFloats(src_values);
        src_values = src.ToFloatVector();  // as stored in `from`
        const int64_t dst_size = batch * dst_layout.batch_stride + 2;
        Tensor dst_host = Tensor::Zeros({dst_size}, to);
        dst_host.CopyFromFloats(std::vector<float>(static_cast<size_t>(dst_size), kSentinel));
        Tensor dst = dst_host.ToDevice(Device::kCuda);
        CastMatrices(batch, src.ToDevice(Device::kCuda), src_layout, &dst, dst_layout);

        std::vector<float> expected(static_cast<size_t>(dst_size), kSentinel);
        for (int64_t i = 0; i < batch; ++i) {
          for (int64_t r = 0; r < rows; ++r) {
            for (int64_t c = 0; c < cols; ++c) {
              expected[i * dst_layout.batch_stride + r * dst_layout.ld + c] =
                  src_values[i * src_layout.batch_stride + r * src_layout.ld + c];
            }
          }
        }
        Tensor expected_tensor = Tensor::Zeros({dst_size}, to);
        expected_tensor.CopyFromFloats(expected);  // the CPU's one rounding to `to`
        EXPECT_EQ(dst.ToDevice(Device::kCpu).ToFloatVector(), expected_tensor.ToFloatVector());
      }
    }
  }
}

TEST_F(CudaCastTest, EmptyTensorIsANoOp) {
  Tensor src = Tensor::Zeros({0, 4}, DType::kF32, Device::kCuda);
  Tensor dst = Tensor::Zeros({0, 4}, DType::kF16, Device::kCuda);
  CastTensor(src, &dst);
  CudaContext::Current().SynchronizeCompute();  // would abort on a failed (empty-grid) launch
  EXPECT_EQ(dst.numel(), 0);
}

TEST_F(CudaCastTest, RejectsMismatchedShapesAndOverlap) {
  // The default death-test style forks a process that already runs CUDA threads; "threadsafe"
  // re-executes the test binary instead.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Tensor src = Tensor::Zeros({8}, DType::kF32, Device::kCuda);
  Tensor wrong_shape = Tensor::Zeros({4}, DType::kF16, Device::kCuda);
  EXPECT_DEATH(CastTensor(src, &wrong_shape), "CastTensor: \\[8\\] -> \\[4\\]");
  Tensor overlapping = src.View(2, {4});
  Tensor overlapping_src = src.View(0, {4});
  EXPECT_DEATH(CastTensor(overlapping_src, &overlapping), "overlap");
}

}  // namespace
}  // namespace xlmr::kernels::cuda
