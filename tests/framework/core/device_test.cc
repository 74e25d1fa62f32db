#include "framework/core/device.h"

#include "gtest/gtest.h"

namespace xlmr {
namespace {

TEST(DeviceTest, ParsesTheThreeChoicesAndRejectsOthers) {
  EXPECT_EQ(*ParseDeviceChoice("auto"), DeviceChoice::kAuto);
  EXPECT_EQ(*ParseDeviceChoice("cpu"), DeviceChoice::kCpu);
  EXPECT_EQ(*ParseDeviceChoice("cuda"), DeviceChoice::kCuda);
  absl::StatusOr<DeviceChoice> bad = ParseDeviceChoice("gpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--device"), std::string::npos);
}

TEST(DeviceTest, InventoryExplainsItselfWhenEmpty) {
  // On a machine without a GPU (CI) the query must not fail: it reports 0 and says why.
  GpuInventory gpus = QueryGpus();
  EXPECT_GE(gpus.count, 0);
  EXPECT_EQ(gpus.count == 0, !gpus.reason.empty()) << gpus.reason;
  if (!CudaBackendBuilt()) {
    EXPECT_EQ(gpus.count, 0);
  }
}

TEST(DeviceTest, AutoPicksCudaOnlyWithAGpuAndAVerifiedBackend) {
  GpuInventory none{0, "no GPU: test"};
  GpuInventory one{1, ""};
  EXPECT_EQ(*ResolveDevice(DeviceChoice::kAuto, none, true), Device::kCpu);
  EXPECT_EQ(*ResolveDevice(DeviceChoice::kAuto, one, true), Device::kCuda);
  EXPECT_EQ(*ResolveDevice(DeviceChoice::kAuto, one, false), Device::kCpu);
  EXPECT_EQ(*ResolveDevice(DeviceChoice::kCpu, one, true), Device::kCpu);
}

TEST(DeviceTest, ExplicitCudaNeedsAGpuButNotVerification) {
  GpuInventory none{0, "no GPU: test"};
  GpuInventory one{1, ""};
  EXPECT_EQ(*ResolveDevice(DeviceChoice::kCuda, one, false), Device::kCuda);
  absl::StatusOr<Device> cuda_without_gpu = ResolveDevice(DeviceChoice::kCuda, none, true);
  ASSERT_FALSE(cuda_without_gpu.ok());
  EXPECT_NE(cuda_without_gpu.status().message().find("--device=cuda: no GPU: test"), std::string::npos);
}

}  // namespace
}  // namespace xlmr
