// How the CUDA backend picks each matrix product's cuBLASLt algorithm, for the layers above
// framework/ops (the binaries' --gemm_algorithms). kernels/cuda/gemm.h says what each choice
// does; a build without CUDA accepts the setting and has nothing to apply it to.
#ifndef XLMR_FRAMEWORK_OPS_GPU_GEMM_ALGORITHMS_H_
#define XLMR_FRAMEWORK_OPS_GPU_GEMM_ALGORITHMS_H_

#include <optional>

#include "absl/strings/string_view.h"

namespace xlmr::ops {

enum class GpuGemmAlgorithms {
  kHeuristic,  // cuBLASLt's heuristic's best: the same algorithms, so the same bits, every run
  kMeasured,   // the fastest of the heuristic's candidates, timed once per product shape
};

// "heuristic" or "measured"; nullopt for anything else.
std::optional<GpuGemmAlgorithms> ParseGpuGemmAlgorithms(absl::string_view name);

// Applies to every product shape first seen after the call (process-wide); call before training.
void UseGpuGemmAlgorithms(GpuGemmAlgorithms algorithms);

}  // namespace xlmr::ops

#endif  // XLMR_FRAMEWORK_OPS_GPU_GEMM_ALGORITHMS_H_
