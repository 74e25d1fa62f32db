// Host-to-device copies staged through pinned memory (kernels/cuda/pinned_staging.h), as every
// Tensor::ToDevice now goes: checked against the host's own bytes, no tolerance (a copy).
//   - Three rings' worth of copies from ONE host buffer rewritten right after each copy: every
//     device tensor holds the bytes of its own moment (a slot reused before the GPU read it, or
//     a copy read from the caller's buffer after returning, would show another pattern).
//   - Copies queued behind a long kernel: the bytes land in stream order (the kernel's output and
//     the later upload are both right).
//   - A copy larger than a slot (the synchronous fallback) and one of exactly a slot.
// Skipped (with the reason) when no GPU is visible, e.g. on the build machine.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "framework/ops/elementwise.h"
#include "framework/tensor/tensor.h"
#include "gtest/gtest.h"
#include "kernels/cuda/pinned_staging.h"
#include "tests/gpu/gpu_test_util.h"

namespace xlmr {
namespace {

using kernels::cuda::PinnedStaging;

class StagedCopyTest : public testing::GpuTest {};

std::vector<int32_t> Pattern(int64_t n, int32_t seed) {
  std::vector<int32_t> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[static_cast<size_t>(i)] = seed * 1000003 + static_cast<int32_t>(i);
  return values;
}

std::vector<int32_t> BackOnHost(const Tensor& device) {
  const Tensor host = device.ToDevice(Device::kCpu);
  return std::vector<int32_t>(host.data<int32_t>(), host.data<int32_t>() + host.numel());
}

TEST_F(StagedCopyTest, EachCopyHoldsTheBytesOfItsMoment) {
  const int64_t n = 4096;
  Tensor host = Tensor::Zeros({n}, DType::kI32, Device::kCpu);
  std::vector<Tensor> uploaded;
  const int copies = 3 * static_cast<int>(PinnedStaging::kSlots) + 1;
  for (int c = 0; c < copies; ++c) {
    const std::vector<int32_t> pattern = Pattern(n, c);
    std::memcpy(host.data<int32_t>(), pattern.data(), pattern.size() * sizeof(int32_t));
    uploaded.push_back(host.ToDevice(Device::kCuda));
  }
  for (int c = 0; c < copies; ++c) {
    EXPECT_EQ(BackOnHost(uploaded[static_cast<size_t>(c)]), Pattern(n, c)) << "copy " << c;
  }
}

TEST_F(StagedCopyTest, CopiesLandInStreamOrderBehindKernels) {
  // A chain of adds keeps the compute stream busy while the host queues the upload behind it.
  const int64_t n = int64_t{1} << 22;
  Tensor accumulator = testing::RandomTensor({n}, DType::kF32, 7).ToDevice(Device::kCuda);
  const Tensor expected_host = accumulator.ToDevice(Device::kCpu);
  for (int i = 0; i < 64; ++i) accumulator = ops::Add(accumulator, accumulator, DType::kF32);
  const std::vector<int32_t> pattern = Pattern(1000, 99);
  Tensor host = Tensor::Zeros({1000}, DType::kI32, Device::kCpu);
  std::memcpy(host.data<int32_t>(), pattern.data(), pattern.size() * sizeof(int32_t));
  const Tensor uploaded = host.ToDevice(Device::kCuda);
  std::memset(host.data<int32_t>(), 0, pattern.size() * sizeof(int32_t));
  EXPECT_EQ(BackOnHost(uploaded), pattern);
  const Tensor result = accumulator.ToDevice(Device::kCpu);
  for (int64_t i = 0; i < n; i += 4099) {
    // x doubled 64 times: exact in binary floating point .
    EXPECT_EQ(result.data<float>()[i], std::ldexp(expected_host.data<float>()[i], 64)) << i;
  }
}

TEST_F(StagedCopyTest, SlotSizedAndLargerCopies) {
  for (const int64_t bytes : {static_cast<int64_t>(PinnedStaging::kSlotBytes),
                              static_cast<int64_t>(PinnedStaging::kSlotBytes) + 4}) {
    const int64_t n = bytes / static_cast<int64_t>(sizeof(int32_t));
    const std::vector<int32_t> pattern = Pattern(n, 5);
    Tensor host = Tensor::Zeros({n}, DType::kI32, Device::kCpu);
    std::memcpy(host.data<int32_t>(), pattern.data(), pattern.size() * sizeof(int32_t));
    EXPECT_EQ(BackOnHost(host.ToDevice(Device::kCuda)), pattern) << bytes << " bytes";
  }
}

}  // namespace
}  // namespace xlmr
