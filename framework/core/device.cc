#include "framework/core/device.h"

#include "absl/strings/str_cat.h"

#ifdef XLMR_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace xlmr {

const char* DeviceName(Device device) {
  return device == Device::kCuda ? "cuda" : "cpu";
}

absl::StatusOr<DeviceChoice> ParseDeviceChoice(absl::string_view text) {
  if (text == "auto") return DeviceChoice::kAuto;
  if (text == "cpu") return DeviceChoice::kCpu;
  if (text == "cuda") return DeviceChoice::kCuda;
  return absl::InvalidArgumentError(
      absl::StrCat("--device: expected auto, cpu or cuda, got '", text, "'"));
}

bool CudaBackendBuilt() {
#ifdef XLMR_WITH_CUDA
  return true;
#else
  return false;
#endif
}

bool CudaBackendVerifiedOnGpu() {
  // tests/gpu passed on an NVIDIA H200 (sm_90, CUDA 13.0, cuBLASLt 13.1) on 2026-11-26, and the
  // end-to-end comparisons with the CPU backend held (bench/results/gpu_first_contact.md).
  return true;
}

GpuInventory QueryGpus() {
  GpuInventory inventory;
#ifdef XLMR_WITH_CUDA
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    // e.g. cudaErrorInsufficientDriver (35) on a machine with the toolkit but no GPU.
    inventory.reason = absl::StrCat("no GPU: cudaGetDeviceCount returned ", static_cast<int>(error),
                                    " (", cudaGetErrorString(error), ")");
    cudaGetLastError();  // clear the sticky error so later runtime calls start clean
    return inventory;
  }
  inventory.count = count;
  if (count == 0) inventory.reason = "no GPU: the CUDA runtime sees 0 devices";
#else
  inventory.reason = "no GPU support: this binary was built without CUDA (--config=cpu or no toolkit)";
#endif
  return inventory;
}

absl::StatusOr<Device> ResolveDevice(DeviceChoice choice, const GpuInventory& gpus,
                                     bool cuda_verified) {
  switch (choice) {
    case DeviceChoice::kCpu:
      return Device::kCpu;
    case DeviceChoice::kAuto:
      return gpus.count > 0 && cuda_verified ? Device::kCuda : Device::kCpu;
    case DeviceChoice::kCuda:
      if (gpus.count > 0) return Device::kCuda;
      return absl::FailedPreconditionError(absl::StrCat("--device=cuda: ", gpus.reason));
  }
  return Device::kCpu;
}

}  // namespace xlmr
