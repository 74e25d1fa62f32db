// Which compute device a tensor or op lives on, and what GPUs this process can see.
#ifndef XLMR_FRAMEWORK_CORE_DEVICE_H_
#define XLMR_FRAMEWORK_CORE_DEVICE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace xlmr {

enum class Device { kCpu, kCuda };

const char* DeviceName(Device device);

// Parses the --device flag value: "auto", "cpu" or "cuda" (ResolveDevice says what each means).
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

// True once the CUDA backend has passed tests/gpu on a GPU (every op against the CPU backend,
// whole training steps, Hugging Face parity). A record kept by hand in device.cc, switched on
// in the commit that adds that run's results; until then only an explicit --device=cuda
// uses the GPU.
bool CudaBackendVerifiedOnGpu();

// Resolves --device against the inventory: "cpu" is the CPU; "cuda" is the GPU, and asking for
// it without one is an error that names the flag and the reason; "auto" is the GPU when one is
// visible and `cuda_verified` (CudaBackendVerifiedOnGpu()), else the CPU.
absl::StatusOr<Device> ResolveDevice(DeviceChoice choice, const GpuInventory& gpus,
                                     bool cuda_verified);

}  // namespace xlmr

#endif  // XLMR_FRAMEWORK_CORE_DEVICE_H_
