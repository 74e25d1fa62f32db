// --device for both recipes (xlmr_finetune, xlmr_predict): which backend runs, and binding the
// process to its GPU.
#ifndef XLMR_RECIPES_DEVICE_CHOICE_H_
#define XLMR_RECIPES_DEVICE_CHOICE_H_

#include "absl/status/statusor.h"
#include "framework/core/device.h"

namespace xlmr::recipes {

// Resolves `choice` as ResolveDevice does (framework/core/device.h): "auto" uses the GPU only
// once the CUDA backend is verified on one (CudaBackendVerifiedOnGpu), "cuda" uses it anyway.
// When the result is an unverified CUDA backend and `warn` (rank 0), one line on stderr starting
// with `program` says so. Choosing CUDA binds the process to GPU `gpu_ordinal` (one rank per
// GPU: the rank's local rank).
// Errors: --device=cuda without a GPU or without the CUDA backend in this binary, and the
// GPU's own refusals (CudaContext::Init), each one line naming the flag or the GPU.
absl::StatusOr<Device> ChooseDevice(DeviceChoice choice, int gpu_ordinal, bool warn, const char* program);

}  // namespace xlmr::recipes

#endif  // XLMR_RECIPES_DEVICE_CHOICE_H_
