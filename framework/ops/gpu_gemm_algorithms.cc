#include "framework/ops/gpu_gemm_algorithms.h"

#ifdef XLMR_WITH_CUDA
#include "kernels/cuda/gemm.h"
#endif

namespace xlmr::ops {

std::optional<GpuGemmAlgorithms> ParseGpuGemmAlgorithms(absl::string_view name) {
  if (name == "heuristic") return GpuGemmAlgorithms::kHeuristic;
  if (name == "measured") return GpuGemmAlgorithms::kMeasured;
  return std::nullopt;
}

void UseGpuGemmAlgorithms(GpuGemmAlgorithms algorithms) {
#ifdef XLMR_WITH_CUDA
  kernels::cuda::SetGemmAlgorithms(algorithms == GpuGemmAlgorithms::kMeasured
                                       ? kernels::cuda::GemmAlgorithms::kMeasured
                                       : kernels::cuda::GemmAlgorithms::kHeuristic);
#else
  (void)algorithms;
#endif
}

}  // namespace xlmr::ops
