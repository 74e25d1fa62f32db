// Prints, as one JSON object on stdout, what a GPU host offers this project's binaries: the
// CUDA driver and runtime versions, cuBLASLt's and NCCL's, and each visible device. It links
// the same libraries as the trainer, so it reports the ones the trainer loads. Used by
// tools/gpu_verify.sh device for summary.md; exits 1 when no device is visible (the JSON is
// printed either way, with the runtime's error).
#include <cstdio>
#include <string>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "nlohmann/json.hpp"

namespace {

// CUDA's integer versions (1000 * major + 10 * minor) as "major.minor".
std::string CudaVersionString(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

int main() {
  nlohmann::json report;
  int driver = 0, runtime = 0;
  // 0 from cudaDriverGetVersion means no driver is installed.
  report["cuda_driver_api"] = cudaDriverGetVersion(&driver) != cudaSuccess ? "unknown"
                              : driver == 0                               ? "no driver"
                                                                          : CudaVersionString(driver);
  report["cuda_runtime"] =
      cudaRuntimeGetVersion(&runtime) == cudaSuccess ? CudaVersionString(runtime) : "unknown";
  // cublasLtGetVersion: major * 10000 + minor * 100 + patch (CUDA 12/13 numbering).
  const size_t cublaslt = cublasLtGetVersion();
  report["cublaslt"] = std::to_string(cublaslt / 10000) + "." + std::to_string(cublaslt / 100 % 100) +
                       "." + std::to_string(cublaslt % 100);
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess) {
    // NCCL_VERSION_CODE since 2.9: major * 10000 + minor * 100 + patch.
    report["nccl"] = std::to_string(nccl / 10000) + "." + std::to_string(nccl / 100 % 100) + "." +
                     std::to_string(nccl % 100);
  } else {
    report["nccl"] = "unknown";
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  report["devices"] = nlohmann::json::array();
  if (status != cudaSuccess) {
    report["error"] = std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
    count = 0;
  }
  for (int device = 0; device < count; ++device) {
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, device) != cudaSuccess) continue;
    report["devices"].push_back({{"name", properties.name},
                                 {"compute_capability", std::to_string(properties.major) + "." +
                                                            std::to_string(properties.minor)},
                                 {"memory_bytes", properties.totalGlobalMem},
                                 {"multiprocessors", properties.multiProcessorCount}});
  }
  std::printf("%s\n", report.dump().c_str());
  return count > 0 ? 0 : 1;
}
