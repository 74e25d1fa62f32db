#include "recipes/device_choice.h"

#include <cstdio>

#include "framework/core/status_macros.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/device_context.h"
#endif

namespace xlmr::recipes {

absl::StatusOr<Device> ChooseDevice(DeviceChoice choice, int gpu_ordinal, bool warn, const char* program) {
  const bool verified = CudaBackendVerifiedOnGpu();
  XLMR_ASSIGN_OR_RETURN(const Device device, ResolveDevice(choice, QueryGpus(), verified));
  if (device != Device::kCuda) return device;
  if (!verified && warn) {
    std::fprintf(stderr,
                 "%s: warning: --device=cuda runs the CUDA backend, which has not yet passed its "
                 "GPU tests (tests/gpu); --device=cpu is the verified path\n",
                 program);
  }
#ifdef XLMR_WITH_CUDA
  XLMR_RETURN_IF_ERROR(kernels::cuda::CudaContext::Init(gpu_ordinal).status());
#endif
  return device;
}

}  // namespace xlmr::recipes
