// Which compute device a tensor or op lives on, and what GPUs this process can see.
#ifndef XLMR_FRAMEWORK_CORE_DEVICE_H_
#define XLMR_FRAMEWORK_CORE_DEVICE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlmr {

enum class Device { kCpu, kCuda };

const char* DeviceName(Device device);

// Parses the --device flag value: "auto", "cpu" or "cuda". "auto" picks CUDA when a GPU is
// visible and the CUDA backend was built.
enum class DeviceChoice { kAuto, kCpu, kCuda };
absl::StatusOr<DeviceChoice> ParseDeviceChoice(absl::string_view text);

// What the CUDA runtime reports about GPUs. Never fails: a build without CUDA, a machine
// without a driver (cudaGetDeviceCount's "insufficient driver") and zero GPUs all give
// count 0 with `reason` saying why.
struct GpuInventory {
  int count = 0;
  std::string reason;  // empty when count > 0
};
GpuInventory QueryGpus();

// True when this binary contains the CUDA backend.
bool CudaBackendBuilt();

// Resolves --device against the inventory; asking for "cuda" without a GPU is an error
// that names the flag and the reason.
absl::StatusOr<Device> ResolveDevice(DeviceChoice choice, const GpuInventory& gpus);

}  // namespace xlmr

#endif  // XLMR_FRAMEWORK_CORE_DEVICE_H_
