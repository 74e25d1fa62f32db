#include "framework/ops/dispatch.h"

#include <cstdlib>
#include <cstring>

#include "framework/ops/linear.h"
#include "gtest/gtest.h"

namespace xlmr {
namespace {

// Host memory registered as the "CUDA" allocator, so that a test can hold tensors whose
// device is kCuda without a GPU and check what the dispatch does with them.
class HostMemoryAsCudaAllocator final : public Allocator {
 public:
  void* Allocate(size_t bytes) override { return std::calloc(bytes == 0 ? 1 : bytes, 1); }
  void Free(void* pointer) override { std::free(pointer); }
  void Zero(void* pointer, size_t bytes) override { std::memset(pointer, 0, bytes); }
};

TEST(DispatchTest, CommonDeviceSkipsUndefinedTensors) {
  const Tensor a = Tensor::Zeros({2}, DType::kF32);
  EXPECT_EQ(ops::CommonDevice("ops::Test", {a, Tensor(), a}), Device::kCpu);
}

TEST(DispatchTest, CpuTensorsRunTheCpuKernel) {
  int calls = 0;
  const int result = ops::DispatchByDevice("ops::Test", Device::kCpu, [&] {
    ++calls;
    return 7;
  });
  EXPECT_EQ(result, 7);
  EXPECT_EQ(calls, 1);
}

TEST(DispatchDeathTest, CudaTensorWithoutCudaKernelNamesTheOp) {
  // An op without a CUDA kernel (nullptr: what XLMR_CUDA_KERNEL gives in a CPU-only build).
  EXPECT_DEATH(ops::DispatchByDevice("ops::Test", Device::kCuda, [] { return 0; }, nullptr),
               "ops::Test has no CUDA kernel yet");
  EXPECT_EQ(ops::DispatchByDevice("ops::Test", Device::kCpu, [] { return 1; }, nullptr), 1);
  EXPECT_EQ(ops::DispatchByDevice("ops::Test", Device::kCuda, [] { return 1; }, [] { return 2; }), 2);
}

TEST(DispatchDeathTest, TensorsOnDifferentDevicesAreRejected) {
  EXPECT_DEATH(
      {
        static HostMemoryAsCudaAllocator allocator;
        RegisterAllocator(Device::kCuda, &allocator);
        const Tensor x = Tensor::Zeros({2, 3}, DType::kF32, Device::kCpu);
        const Tensor w = Tensor::Zeros({4, 3}, DType::kF32, Device::kCuda);
        ops::Linear(x, w, Tensor(), DType::kF32);
      },
      "different devices");
  EXPECT_DEATH(ops::CommonDevice("ops::Test", {Tensor()}), "no defined input");
}

}  // namespace
}  // namespace xlmr
